/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * policy_cases.h - one table of policy.h inputs and the answers they must
 * get, run by libhybridio's unit tests (policy_cases_test.cc) and, in the
 * VM, by the kernel module's test (kmod/tests/hfs_policy_test.c), so that
 * the library and hybridfs cannot decide differently for the same inputs.
 *
 * It covers what the two feed the core from their own state: the re-use
 * history's verdict (HIO_FILE_REUSE), the uncached path (DONTCACHE_OK,
 * PREFER_DONTCACHE, mode dontcache) and the re-use arithmetic (extents,
 * admission).  policy_test.cc keeps one row per rule besides.
 *
 * Freestanding C, data and one function to run a row: no libc.
 */
#ifndef HYBRIDIO_POLICY_CASES_H
#define HYBRIDIO_POLICY_CASES_H

#include "hybridio/policy.h"

#define HIO_CASE_MIB ((hio_u64)1 << 20)

/*
 * A decision row.  The request: op at offset for length, of a 1 GiB file,
 * from a 1 MiB aligned buffer, STATX_DIOALIGN 512 (offset_align when
 * non-zero overrides it), cache state unknown unless cached_pages > 0;
 * policy.h's default configuration in `mode`.
 */
struct hio_policy_case {
	const char *name;
	enum hio_mode mode;
	enum hio_op op;
	hio_u64 offset;
	hio_u64 length;
	hio_u32 file_flags;
	hio_s64 cached_pages;
	hio_u32 offset_align;
	enum hio_path path;
	enum hio_rule rule;
};

#define HIO_R HIO_OP_READ
#define HIO_W HIO_OP_WRITE
#define HIO_M HIO_CASE_MIB
#define HIO_DC (HIO_FILE_DONTCACHE_OK)
#define HIO_RU (HIO_FILE_REUSE)

static const struct hio_policy_case hio_policy_cases[] = {
	{ "large read goes direct", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M, 0, 0, 0,
	  HIO_PATH_DIRECT, HIO_RULE_READ_SIZE },
	{ "large read admitted by the history goes through the cache", HIO_MODE_HYBRID,
	  HIO_R, 0, 16 * HIO_M, HIO_RU, 0, 0, HIO_PATH_BUFFERED, HIO_RULE_REUSE },
	{ "small read: reuse changes nothing", HIO_MODE_HYBRID, HIO_R, 0, 4096, HIO_RU, 0, 0,
	  HIO_PATH_BUFFERED, HIO_RULE_SMALL },
	{ "cached read admitted: read_cached decides first", HIO_MODE_HYBRID, HIO_R, 0,
	  16 * HIO_M, HIO_RU, 4096, 0, HIO_PATH_BUFFERED, HIO_RULE_READ_CACHED },
	{ "no O_DIRECT, large read: uncached", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_FILE_NO_DIRECT | HIO_DC, 0, 0, HIO_PATH_DONTCACHE, HIO_RULE_NO_DIRECT },
	{ "no O_DIRECT, no uncached path: buffered", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_FILE_NO_DIRECT, 0, 0, HIO_PATH_BUFFERED, HIO_RULE_NO_DIRECT },
	{ "no O_DIRECT, admitted: through the cache", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_FILE_NO_DIRECT | HIO_DC | HIO_RU, 0, 0, HIO_PATH_BUFFERED, HIO_RULE_REUSE },
	{ "no O_DIRECT, below the uncached threshold: reuse changes nothing", HIO_MODE_HYBRID,
	  HIO_R, 0, HIO_M / 2, HIO_FILE_NO_DIRECT | HIO_DC | HIO_RU, 0, 0,
	  HIO_PATH_BUFFERED, HIO_RULE_NO_DIRECT },
	{ "no aligned body, large read: uncached", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_DC, 0, 32 * 1024 * 1024, HIO_PATH_DONTCACHE, HIO_RULE_UNALIGNED },
	{ "no aligned body, admitted: through the cache", HIO_MODE_HYBRID, HIO_R, 0,
	  16 * HIO_M, HIO_DC | HIO_RU, 0, 32 * 1024 * 1024, HIO_PATH_BUFFERED, HIO_RULE_REUSE },
	{ "measured uncached beats direct", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_FILE_PREFER_DONTCACHE | HIO_DC, 0, 0, HIO_PATH_DONTCACHE, HIO_RULE_READ_SIZE },
	{ "measured uncached, admitted: through the cache", HIO_MODE_HYBRID, HIO_R, 0,
	  16 * HIO_M, HIO_FILE_PREFER_DONTCACHE | HIO_DC | HIO_RU, 0, 0,
	  HIO_PATH_BUFFERED, HIO_RULE_REUSE },
	{ "writes ignore reuse", HIO_MODE_HYBRID, HIO_W, 0, 16 * HIO_M, HIO_RU, 0, 0,
	  HIO_PATH_DIRECT, HIO_RULE_WRITE_SIZE },
	{ "mapped file: one copy in the cache", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_FILE_MAPPED | HIO_RU, 0, 0, HIO_PATH_BUFFERED, HIO_RULE_MAPPED },
	{ "read past EOF", HIO_MODE_HYBRID, HIO_R, 2048 * HIO_M, 16 * HIO_M, HIO_RU, 0, 0,
	  HIO_PATH_BUFFERED, HIO_RULE_EMPTY },
	{ "caller's O_DIRECT is never switched", HIO_MODE_HYBRID, HIO_R, 0, 16 * HIO_M,
	  HIO_FILE_CALLER_DIRECT | HIO_RU, 0, 0, HIO_PATH_DIRECT, HIO_RULE_CALLER_DIRECT },
	{ "mode dontcache: uncached, reuse or not", HIO_MODE_DONTCACHE, HIO_R, 0, 16 * HIO_M,
	  HIO_DC | HIO_RU, 0, 0, HIO_PATH_DONTCACHE, HIO_RULE_FORCED_DONTCACHE },
	{ "mode dontcache write", HIO_MODE_DONTCACHE, HIO_W, 0, 4096, HIO_DC, 0, 0,
	  HIO_PATH_DONTCACHE, HIO_RULE_FORCED_DONTCACHE },
	{ "mode dontcache without the uncached path: buffered", HIO_MODE_DONTCACHE, HIO_W, 0,
	  16 * HIO_M, 0, 0, 0, HIO_PATH_BUFFERED, HIO_RULE_FORCED_DONTCACHE },
	{ "mode direct ignores reuse", HIO_MODE_DIRECT, HIO_R, 0, 16 * HIO_M, HIO_RU, 0, 0,
	  HIO_PATH_DIRECT, HIO_RULE_FORCED_DIRECT },
	{ "mode buffered", HIO_MODE_BUFFERED, HIO_R, 0, 16 * HIO_M, HIO_DC | HIO_RU, 0, 0,
	  HIO_PATH_BUFFERED, HIO_RULE_FORCED_BUFFERED },
};

#undef HIO_R
#undef HIO_W
#undef HIO_M
#undef HIO_DC
#undef HIO_RU

/* The request and configuration of row @c. */
static inline void hio_policy_case_inputs(const struct hio_policy_case *c,
					  struct hio_policy_config *cfg,
					  struct hio_request *r)
{
	hio_policy_config_defaults(cfg);
	cfg->mode = c->mode;
	r->op = c->op;
	r->offset = c->offset;
	r->length = c->length;
	r->buf_addr = (hio_uptr)0x7f0000000000ULL;
	r->mem_align = 512;
	r->offset_align = c->offset_align ? c->offset_align : 512;
	r->file_size = 1024 * HIO_CASE_MIB;
	r->cached_pages = c->cached_pages > 0 ? c->cached_pages : HIO_PAGES_UNKNOWN;
	r->dirty_pages = HIO_PAGES_UNKNOWN;
	r->pressure = 0;
	r->seq_run = 0;
	r->file_flags = c->file_flags;
	r->writers = 0;
}

/* Decide row @c; true when it gets the path and rule it must. */
static inline bool hio_policy_case_holds(const struct hio_policy_case *c,
					 struct hio_decision *d)
{
	struct hio_policy_config cfg;
	struct hio_request r;

	hio_policy_case_inputs(c, &cfg, &r);
	hio_policy_decide(&cfg, &r, d);
	return d->path == c->path && d->rule == c->rule;
}

/*
 * An extent row: the bitmaps of the extents a read of [offset, offset +
 * length) of a file of size touches (hio_reuse_extent_mask()), finishes
 * (hio_reuse_finished_mask()) and must find read before to be a re-read
 * (hio_reuse_reread_mask()).
 */
struct hio_reuse_extent_case {
	hio_u64 size;
	hio_u64 offset;
	hio_u64 length;
	hio_u64 mask;
	hio_u64 finished;
	hio_u64 reread;
};

static const struct hio_reuse_extent_case hio_reuse_extent_cases[] = {
	{ 16 * HIO_CASE_MIB, 0, 16 * HIO_CASE_MIB, 0xffffULL, 0xffffULL, 0xffffULL },
	{ 16 * HIO_CASE_MIB, 0, 64 * HIO_CASE_MIB, 0xffffULL, 0xffffULL, 0xffffULL }, /* clamped to the size */
	{ 16 * HIO_CASE_MIB, 3 * HIO_CASE_MIB + 5, 1, 0x8ULL, 0, 0x8ULL },
	{ 64 * HIO_CASE_MIB + 1, 64 * HIO_CASE_MIB, 1, 1ULL << 32, 1ULL << 32, 1ULL << 32 }, /* 2 MiB extents; the last byte */
	{ 1024 * HIO_CASE_MIB, 0, 1, 1ULL, 0, 1ULL },                       /* 16 MiB extents */
	{ 1024 * HIO_CASE_MIB, 8 * HIO_CASE_MIB, 16 * HIO_CASE_MIB, 0x3ULL, 0x1ULL, 0x1ULL },
	{ 1024 * HIO_CASE_MIB, 15 * HIO_CASE_MIB, 17 * HIO_CASE_MIB, 0x3ULL, 0x3ULL, 0x3ULL },
	{ 1024 * HIO_CASE_MIB, 1008 * HIO_CASE_MIB, 16 * HIO_CASE_MIB, 1ULL << 63, 1ULL << 63, 1ULL << 63 },
	/* 4 MiB extents; the last 12 bytes (a trailer) not read */
	{ 146600640ULL, 0, 146600628ULL, 0x7ffffffffULL, 0x3ffffffffULL, 0x3ffffffffULL },
	{ 16 * HIO_CASE_MIB, 16 * HIO_CASE_MIB, 1, 0, 0, 0 },           /* at EOF */
	{ 16 * HIO_CASE_MIB, 0, 0, 0, 0, 0 },                           /* empty */
};

/*
 * The admission's contract, for @key over extents 0..63: nothing under a
 * zero budget, everything when the budget holds all the data read, and a
 * smaller budget admits a subset of what a larger one does, in about the
 * budget's share (a half admits between 16 and 48 of 64).  Returns the
 * number of the first check that fails, 0 when all hold.
 */
static inline int hio_reuse_admission_holds(hio_u64 key)
{
	const hio_u64 read = 64 * HIO_CASE_MIB;
	unsigned half = 0;
	hio_u64 e;

	for (e = 0; e < HIO_REUSE_EXTENTS; e++) {
		bool quarter = hio_reuse_admits(key, e, read / 4, read);
		bool halfway = hio_reuse_admits(key, e, read / 2, read);

		if (hio_reuse_admits(key, e, 0, read))
			return 1;
		if (!hio_reuse_admits(key, e, read, read))
			return 2;
		if (quarter && !halfway)
			return 3;
		if (hio_reuse_admits(key, e, read / 2, read) != halfway)
			return 4;
		half += halfway;
	}
	if (half < 16 || half > 48)
		return 5;
	if (hio_reuse_budget_auto(8 * HIO_CASE_MIB) != 7 * HIO_CASE_MIB ||
	    hio_reuse_budget_auto(~(hio_u64)0) != ~(hio_u64)0 / 8 * 7)
		return 6;
	return 0;
}

#endif /* HYBRIDIO_POLICY_CASES_H */
