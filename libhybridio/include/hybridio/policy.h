/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * hybridio/policy.h - the Hybrid-IO policy core.
 *
 * One pure, allocation-free function, hio_policy_decide(), routes a single
 * read or write request to the buffered, direct or uncached-buffered
 * (RWF_DONTCACHE) path and, for direct requests, plans how the request is
 * cut: an unaligned head and tail through the page cache, an aligned body
 * direct, and whether the body must be copied through an aligned bounce
 * buffer because the caller's memory is misaligned.
 *
 * The same header is compiled into libhybridio (C and C++) and into the
 * hybridfs kernel module, so it is freestanding C: no libc, no floating
 * point, no division, no allocation, no global state.  Every function is
 * static inline and safe to call from any thread or context concurrently.
 *
 * Every rule that can decide is named by enum hio_rule and documented in
 * docs/policy.md, in the order hio_policy_decide() applies them.
 */
#ifndef HYBRIDIO_POLICY_H
#define HYBRIDIO_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef u64 hio_u64;
typedef u32 hio_u32;
typedef s64 hio_s64;
typedef unsigned long hio_uptr;
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint64_t hio_u64;
typedef uint32_t hio_u32;
typedef int64_t hio_s64;
typedef uintptr_t hio_uptr;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What the caller asks for. */
enum hio_op { HIO_OP_READ = 0, HIO_OP_WRITE = 1 };

/* Where (the body of) a request goes. */
enum hio_path {
	HIO_PATH_BUFFERED = 0,  /* through the page cache */
	HIO_PATH_DIRECT = 1,    /* O_DIRECT / IOCB_DIRECT */
	HIO_PATH_DONTCACHE = 2, /* buffered, pages dropped after I/O (RWF_DONTCACHE) */
	HIO_PATH_COUNT = 3
};

/* The configured policy: hybrid decides per request, the others force a path. */
enum hio_mode {
	HIO_MODE_HYBRID = 0,
	HIO_MODE_BUFFERED = 1,
	HIO_MODE_DIRECT = 2,
	HIO_MODE_DONTCACHE = 3
};

/*
 * The rule that made a decision.  The values are fixed (struct hio_stats
 * counts per rule: ABI), so a new rule is appended; they are not the order
 * of evaluation, which is hio_policy_decide()'s (docs/policy.md lists the
 * rules in that order): caller_direct, forced_buffered, empty, append,
 * mapped, forced_dontcache, no_direct, read_cached, write_dirty, small,
 * reuse, unaligned, then the rule that let the body go direct (forced_direct,
 * or the size rule whose threshold was in effect).  A decision made by a size
 * threshold is reported as learned or explored when the request says its
 * thresholds came from measurements (HIO_FILE_LEARNED, HIO_FILE_EXPLORE).
 */
enum hio_rule {
	HIO_RULE_CALLER_DIRECT = 0,    /* file opened O_DIRECT by the caller: never switched */
	HIO_RULE_FORCED_BUFFERED,      /* mode buffered */
	HIO_RULE_EMPTY,                /* zero-length request, or a read at/after EOF */
	HIO_RULE_APPEND,               /* O_APPEND write: offset unknown until the kernel picks it */
	HIO_RULE_MAPPED,               /* file is mmap'ed: keep one coherent copy in the cache */
	HIO_RULE_NO_DIRECT,            /* file or filesystem refuses O_DIRECT, or alignment unknown */
	HIO_RULE_FORCED_DONTCACHE,     /* mode dontcache */
	HIO_RULE_READ_CACHED,          /* read of a range that is (mostly) in the page cache */
	HIO_RULE_WRITE_DIRTY,          /* overwrite of a range that is (mostly) dirty in the cache */
	HIO_RULE_SMALL,                /* below the (effective) size threshold */
	HIO_RULE_UNALIGNED,            /* no aligned body large enough to be worth a direct I/O */
	HIO_RULE_FORCED_DIRECT,        /* mode direct */
	HIO_RULE_WRITE_SIZE,           /* write at or above the write threshold */
	HIO_RULE_READ_SIZE,            /* read at or above the read threshold */
	HIO_RULE_SYNC_WRITE,           /* O_SYNC/O_DSYNC write above the lower sync threshold */
	HIO_RULE_SEQUENTIAL,           /* long sequential write stream above the stream threshold */
	HIO_RULE_PRESSURE,             /* memory pressure lowered the threshold */
	HIO_RULE_CONTENDED,            /* several threads writing the file lowered the threshold */
	HIO_RULE_LEARNED,              /* a size threshold measured on this filesystem decided (HIO_FILE_LEARNED) */
	HIO_RULE_EXPLORED,             /* an exploration request sent down another path (HIO_FILE_EXPLORE) */
	HIO_RULE_REUSE,                /* an off-cache read of data read off the cache recently, admitted (HIO_FILE_REUSE) */
	HIO_RULE_COUNT
};

/* Facts about the open file (hio_request.file_flags). */
#define HIO_FILE_APPEND        0x01u /* opened O_APPEND */
#define HIO_FILE_SYNC          0x02u /* opened O_SYNC or O_DSYNC */
#define HIO_FILE_MAPPED        0x04u /* a shared or private mapping of the file exists */
#define HIO_FILE_NO_DIRECT     0x08u /* O_DIRECT was refused for this file */
#define HIO_FILE_CALLER_DIRECT 0x10u /* the caller itself opened the file O_DIRECT */
#define HIO_FILE_DONTCACHE_OK  0x20u /* RWF_DONTCACHE works on this file */
/* 0x40u is not used. */
/*
 * Inputs from measurement (libhybridio's learner, docs/policy.md "Learned
 * thresholds"); the kernel module never sets them.
 * PREFER_DONTCACHE: a hybrid request of at least a page that the size rules
 * send off the page cache goes uncached (RWF_DONTCACHE, whole) instead of
 * direct, when DONTCACHE_OK.
 * LEARNED: the size thresholds of the configuration were moved by
 * measurements and that changed this decision; a decision made by a size
 * threshold is reported as HIO_RULE_LEARNED.
 * EXPLORE: the thresholds were moved to send this request down another path
 * to measure it; reported as HIO_RULE_EXPLORED.
 */
#define HIO_FILE_PREFER_DONTCACHE 0x80u
#define HIO_FILE_LEARNED          0x100u
#define HIO_FILE_EXPLORE          0x200u
/*
 * REUSE: the re-use history's verdict on this read (libhybridio's
 * reuse_history.h): its range was read off the page cache recently and fits
 * the re-use memory budget.  A hybrid read that would otherwise leave the
 * page cache (direct or uncached) takes it instead, reported as
 * HIO_RULE_REUSE, so that the next read of the range is served from memory.
 * Ignored for writes.
 */
#define HIO_FILE_REUSE            0x400u

/*
 * The contention signal (FAST '24 hybrid I/O): when at least
 * HIO_CONTENTION_WRITERS threads are writing one file at the same time, the
 * write threshold in effect is divided by 2^HIO_CONTENTION_SHIFT.  Buffered
 * writers of one file serialise on the inode lock and on the copy into the
 * shared page cache; direct writers only meet at the device.  Constants, not
 * hio_policy_config fields: that struct is part of the library's ABI.
 */
#define HIO_CONTENTION_WRITERS 2u
#define HIO_CONTENTION_SHIFT   2u

/* Unknown page counts (no cache probe was run or none is available). */
#define HIO_PAGES_UNKNOWN ((hio_s64)-1)

/* Tunables; hio_policy_config_defaults() gives the documented defaults. */
struct hio_policy_config {
	enum hio_mode mode;
	hio_u64 write_threshold;      /* hybrid: writes >= this go direct (Lustre: 2 MiB) */
	hio_u64 read_threshold;       /* hybrid: reads >= this go direct (Lustre: 8 MiB) */
	hio_u64 sync_write_threshold; /* hybrid: O_SYNC/O_DSYNC writes >= this go direct */
	hio_u64 stream_threshold;     /* hybrid: writes >= this in a sequential stream go direct */
	hio_u32 stream_min_run;       /* ... once the stream has this many sequential predecessors */
	hio_u32 pressure_high;        /* pressure (0-100) at which thresholds are divided ... */
	hio_u32 pressure_shift;       /* ... by 2^pressure_shift */
	hio_u32 cached_percent;       /* reads: stay buffered if >= this % of the range is cached */
	hio_u32 dirty_percent;        /* writes: stay buffered if >= this % of the range is dirty */
	hio_u32 min_body_percent;     /* a split is worth it if the body is >= this % of the request */
	hio_u32 page_size;            /* power of two; head/tail cuts fall on page boundaries */
	hio_u64 dontcache_threshold;  /* hybrid: large but undirectable requests >= this go DONTCACHE */
};

/* One request and everything known about it when it is decided. */
struct hio_request {
	enum hio_op op;
	hio_u64 offset;      /* file offset */
	hio_u64 length;      /* bytes asked for */
	hio_uptr buf_addr;   /* caller's buffer address */
	hio_u32 mem_align;   /* STATX_DIOALIGN stx_dio_mem_align; 0 = unknown */
	hio_u32 offset_align;/* STATX_DIOALIGN stx_dio_offset_align; 0 = unknown */
	hio_u64 file_size;   /* current size (reads are clamped to it) */
	hio_s64 cached_pages;/* pages of the range in the cache, or HIO_PAGES_UNKNOWN */
	hio_s64 dirty_pages; /* dirty pages of the range, or HIO_PAGES_UNKNOWN */
	hio_u32 pressure;    /* memory pressure 0 (none) .. 100 (writers being throttled) */
	hio_u32 seq_run;     /* sequential predecessors of this request in its stream */
	hio_u32 file_flags;  /* HIO_FILE_* */
	hio_u32 writers;     /* writes in progress on the file, this one included; 0 = unknown */
};

/*
 * The decision.  The request [offset, offset + length) is cut into
 * head_len + body_len + tail_len bytes (possibly shortened for reads past
 * EOF: the three never extend past file_size for reads).  Head and tail,
 * when non-zero, take the buffered path; the body takes `path`.  When
 * `bounce` is set, the body's memory is not aligned and must be staged
 * through an aligned buffer.  For non-direct decisions the whole request
 * is the body and head_len == tail_len == 0.
 */
struct hio_decision {
	enum hio_path path;
	enum hio_rule rule;
	hio_u64 head_len;
	hio_u64 body_len;
	hio_u64 tail_len;
	bool bounce;
	bool split; /* head_len or tail_len is non-zero */
};

#define HIO_KIB ((hio_u64)1024)
#define HIO_MIB (HIO_KIB * 1024)

static inline void hio_policy_config_defaults(struct hio_policy_config *c)
{
	c->mode = HIO_MODE_HYBRID;
	c->write_threshold = 2 * HIO_MIB;
	c->read_threshold = 8 * HIO_MIB;
	c->sync_write_threshold = 256 * HIO_KIB;
	c->stream_threshold = 1 * HIO_MIB;
	c->stream_min_run = 4;
	c->pressure_high = 80;
	c->pressure_shift = 2;
	c->cached_percent = 50;
	c->dirty_percent = 25;
	c->min_body_percent = 50;
	c->page_size = 4096;
	c->dontcache_threshold = 1 * HIO_MIB;
}

static inline const char *hio_path_name(enum hio_path p)
{
	switch (p) {
	case HIO_PATH_BUFFERED: return "buffered";
	case HIO_PATH_DIRECT: return "direct";
	case HIO_PATH_DONTCACHE: return "dontcache";
	default: return "?";
	}
}

static inline const char *hio_mode_name(enum hio_mode m)
{
	switch (m) {
	case HIO_MODE_HYBRID: return "hybrid";
	case HIO_MODE_BUFFERED: return "buffered";
	case HIO_MODE_DIRECT: return "direct";
	case HIO_MODE_DONTCACHE: return "dontcache";
	default: return "?";
	}
}

static inline const char *hio_rule_name(enum hio_rule r)
{
	switch (r) {
	case HIO_RULE_CALLER_DIRECT: return "caller_direct";
	case HIO_RULE_FORCED_BUFFERED: return "forced_buffered";
	case HIO_RULE_EMPTY: return "empty";
	case HIO_RULE_APPEND: return "append";
	case HIO_RULE_MAPPED: return "mapped";
	case HIO_RULE_NO_DIRECT: return "no_direct";
	case HIO_RULE_FORCED_DONTCACHE: return "forced_dontcache";
	case HIO_RULE_READ_CACHED: return "read_cached";
	case HIO_RULE_WRITE_DIRTY: return "write_dirty";
	case HIO_RULE_SMALL: return "small";
	case HIO_RULE_UNALIGNED: return "unaligned";
	case HIO_RULE_FORCED_DIRECT: return "forced_direct";
	case HIO_RULE_WRITE_SIZE: return "write_size";
	case HIO_RULE_READ_SIZE: return "read_size";
	case HIO_RULE_SYNC_WRITE: return "sync_write";
	case HIO_RULE_SEQUENTIAL: return "sequential";
	case HIO_RULE_PRESSURE: return "pressure";
	case HIO_RULE_CONTENDED: return "contended";
	case HIO_RULE_LEARNED: return "learned";
	case HIO_RULE_EXPLORED: return "explored";
	case HIO_RULE_REUSE: return "reuse";
	default: return "?";
	}
}

static inline bool hio_is_pow2(hio_u64 v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* Number of pages of size `page` (a power of two) touched by [off, off+len). */
static inline hio_u64 hio_range_pages(hio_u64 off, hio_u64 len, hio_u32 page)
{
	hio_u64 mask = (hio_u64)page - 1;

	if (len == 0)
		return 0;
	return (((off + len + mask) & ~mask) - (off & ~mask)) >> __builtin_ctzll(page);
}

/* part * 100 >= whole * percent, without division (and without overflow for sane sizes). */
static inline bool hio_at_least_percent(hio_u64 part, hio_u64 whole, hio_u32 percent)
{
	return part * 100 >= whole * percent;
}

static inline void hio_decide_whole(struct hio_decision *d, enum hio_path path,
				    enum hio_rule rule, hio_u64 length)
{
	d->path = path;
	d->rule = rule;
	d->head_len = 0;
	d->body_len = length;
	d->tail_len = 0;
	d->bounce = false;
	d->split = false;
}

/* Large enough to be worth DONTCACHE when direct is impossible, and supported? */
static inline bool hio_dontcache_fits(const struct hio_policy_config *c,
				      const struct hio_request *r, hio_u64 len)
{
	return (r->file_flags & HIO_FILE_DONTCACHE_OK) && len >= c->dontcache_threshold;
}

/* The rule reported for a decision made by a size threshold (see HIO_FILE_LEARNED). */
static inline enum hio_rule hio_size_rule_reported(const struct hio_request *r, enum hio_rule rule)
{
	if (r->file_flags & HIO_FILE_EXPLORE)
		return HIO_RULE_EXPLORED;
	if (r->file_flags & HIO_FILE_LEARNED)
		return HIO_RULE_LEARNED;
	return rule;
}

/* A read the re-use history admitted to the page cache (HIO_FILE_REUSE). */
static inline bool hio_reuse_admitted(const struct hio_request *r)
{
	return r->op == HIO_OP_READ && (r->file_flags & HIO_FILE_REUSE);
}

/*
 * Plan a direct I/O of [offset, offset + len): cut at page (and device)
 * alignment.  Returns false when no worthwhile aligned body exists.
 */
static inline bool hio_plan_direct(const struct hio_policy_config *c,
				   const struct hio_request *r, hio_u64 len,
				   bool forced, struct hio_decision *d)
{
	hio_u64 cut = c->page_size;
	hio_u64 start, end, body, mask;

	if (r->offset_align > cut)
		cut = r->offset_align;
	mask = cut - 1;
	start = (r->offset + mask) & ~mask;
	end = (r->offset + len) & ~mask;
	if (end <= start)
		return false;
	body = end - start;
	/* A forced-direct policy takes any aligned body; hybrid wants most of the request. */
	if (!forced && !hio_at_least_percent(body, len, c->min_body_percent))
		return false;
	d->path = HIO_PATH_DIRECT;
	d->head_len = start - r->offset;
	d->body_len = body;
	d->tail_len = r->offset + len - end;
	d->split = d->head_len != 0 || d->tail_len != 0;
	d->bounce = ((r->buf_addr + d->head_len) & ((hio_uptr)r->mem_align - 1)) != 0;
	return true;
}

/*
 * Decide one request.  Pure: reads only its arguments, writes only *d.
 * Returns d->path for convenience.
 */
static inline enum hio_path hio_policy_decide(const struct hio_policy_config *c,
					      const struct hio_request *r,
					      struct hio_decision *d)
{
	hio_u64 len = r->length;
	hio_u64 threshold, pages;
	enum hio_rule size_rule;
	bool is_write = r->op == HIO_OP_WRITE;
	bool forced = c->mode == HIO_MODE_DIRECT;

	if (r->file_flags & HIO_FILE_CALLER_DIRECT) {
		hio_decide_whole(d, HIO_PATH_DIRECT, HIO_RULE_CALLER_DIRECT, len);
		return d->path;
	}
	if (c->mode == HIO_MODE_BUFFERED) {
		hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_FORCED_BUFFERED, len);
		return d->path;
	}
	if (!is_write) {
		/* Reads never look past EOF: the kernel returns what is there. */
		if (r->offset >= r->file_size)
			len = 0;
		else if (len > r->file_size - r->offset)
			len = r->file_size - r->offset;
	}
	if (len == 0) {
		hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_EMPTY, r->length);
		return d->path;
	}
	if (is_write && (r->file_flags & HIO_FILE_APPEND)) {
		hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_APPEND, r->length);
		return d->path;
	}
	if (r->file_flags & HIO_FILE_MAPPED) {
		hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_MAPPED, r->length);
		return d->path;
	}
	if (c->mode == HIO_MODE_DONTCACHE) {
		hio_decide_whole(d, (r->file_flags & HIO_FILE_DONTCACHE_OK) ?
				 HIO_PATH_DONTCACHE : HIO_PATH_BUFFERED,
				 HIO_RULE_FORCED_DONTCACHE, r->length);
		return d->path;
	}
	if ((r->file_flags & HIO_FILE_NO_DIRECT) || !hio_is_pow2(r->mem_align) ||
	    !hio_is_pow2(r->offset_align) || !hio_is_pow2(c->page_size)) {
		bool dc = !forced && hio_dontcache_fits(c, r, len);

		if (dc && hio_reuse_admitted(r)) {
			hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_REUSE, r->length);
			return d->path;
		}
		hio_decide_whole(d, dc ? HIO_PATH_DONTCACHE : HIO_PATH_BUFFERED,
				 HIO_RULE_NO_DIRECT, r->length);
		return d->path;
	}

	if (!forced) {
		pages = hio_range_pages(r->offset, len, c->page_size);
		if (!is_write && r->cached_pages > 0 &&
		    hio_at_least_percent((hio_u64)r->cached_pages, pages, c->cached_percent)) {
			hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_READ_CACHED, r->length);
			return d->path;
		}
		if (is_write && r->dirty_pages > 0 &&
		    hio_at_least_percent((hio_u64)r->dirty_pages, pages, c->dirty_percent)) {
			hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_WRITE_DIRTY, r->length);
			return d->path;
		}

		threshold = is_write ? c->write_threshold : c->read_threshold;
		size_rule = is_write ? HIO_RULE_WRITE_SIZE : HIO_RULE_READ_SIZE;
		if (is_write && (r->file_flags & HIO_FILE_SYNC) &&
		    c->sync_write_threshold < threshold) {
			threshold = c->sync_write_threshold;
			size_rule = HIO_RULE_SYNC_WRITE;
		}
		if (is_write && r->seq_run >= c->stream_min_run &&
		    c->stream_threshold < threshold) {
			threshold = c->stream_threshold;
			size_rule = HIO_RULE_SEQUENTIAL;
		}
		if (r->pressure >= c->pressure_high &&
		    (threshold >> c->pressure_shift) < threshold) {
			threshold >>= c->pressure_shift;
			size_rule = HIO_RULE_PRESSURE;
		}
		/*
		 * Reads keep their own threshold in a stream: the kernel's
		 * readahead already reads a sequential stream ahead, which one
		 * synchronous direct call at a time does not beat below the
		 * read threshold (docs/policy.md).
		 */
		if (is_write && r->writers >= HIO_CONTENTION_WRITERS &&
		    (threshold >> HIO_CONTENTION_SHIFT) < threshold) {
			threshold >>= HIO_CONTENTION_SHIFT;
			size_rule = HIO_RULE_CONTENDED;
		}
		if (len < threshold) {
			hio_decide_whole(d, HIO_PATH_BUFFERED,
					 hio_size_rule_reported(r, HIO_RULE_SMALL), r->length);
			return d->path;
		}
		/*
		 * Off the cache by size, but read recently and admitted by
		 * the re-use history: through the cache, to be read again
		 * from memory (HIO_FILE_REUSE).
		 */
		if (hio_reuse_admitted(r)) {
			hio_decide_whole(d, HIO_PATH_BUFFERED, HIO_RULE_REUSE, r->length);
			return d->path;
		}
		/*
		 * Measured: uncached buffered beats direct here.  It needs no
		 * alignment, but is kept to requests of a page or more, as a
		 * direct body is (hio_policy_smallest_offcache holds).
		 */
		if ((r->file_flags & HIO_FILE_PREFER_DONTCACHE) &&
		    (r->file_flags & HIO_FILE_DONTCACHE_OK) && len >= c->page_size) {
			hio_decide_whole(d, HIO_PATH_DONTCACHE,
					 hio_size_rule_reported(r, size_rule), r->length);
			return d->path;
		}
	} else {
		size_rule = HIO_RULE_FORCED_DIRECT;
	}

	if (!hio_plan_direct(c, r, len, forced, d)) {
		bool dc = !forced && hio_dontcache_fits(c, r, len);

		hio_decide_whole(d, dc ? HIO_PATH_DONTCACHE : HIO_PATH_BUFFERED,
				 HIO_RULE_UNALIGNED, r->length);
		return d->path;
	}
	d->rule = forced ? size_rule : hio_size_rule_reported(r, size_rule);
	return d->path;
}

/*
 * Memory pressure, 0 (idle) to 100 (writers throttled): the `pressure`
 * input of hio_policy_decide().  The larger of dirty + writeback memory as
 * a share of the dirty limit (100 when there is no limit) and the share of
 * memory that is not available, raised to a memory stall percentage where
 * one is known (PSI "some avg10"; else 0).  Sizes in KiB.  The library
 * computes it from /proc/meminfo and the simulator from its page-cache
 * model, both with this function.
 */
static inline unsigned hio_policy_pressure(hio_u64 total_kb, hio_u64 available_kb, hio_u64 in_flight_kb,
					   hio_u64 dirty_limit_kb, unsigned stall_percent)
{
	hio_u64 result = 0, used_share;

	if (total_kb) {
		result = dirty_limit_kb ? in_flight_kb * 100 / dirty_limit_kb : 100;
		used_share = 100 - (available_kb >= total_kb ? 100 : available_kb * 100 / total_kb);
		if (used_share > result)
			result = used_share;
	}
	if (stall_percent > result)
		result = stall_percent;
	return result > 100 ? 100u : (unsigned)result;
}

/*
 * The smallest request of `op` that hio_policy_decide() could send anywhere
 * but the page cache under configuration *c, whatever the request's other
 * facts (pressure, contention, sync flags, streams, alignment): callers
 * skip every probe and system call of their own for anything smaller.
 * ~0 under mode buffered.  Every caller uses this one function (the shim,
 * the engine and the simulator), so they cannot disagree with the core.
 */
static inline hio_u64 hio_policy_smallest_offcache(const struct hio_policy_config *c, enum hio_op op)
{
	hio_u64 lowest;

	switch (c->mode) {
	case HIO_MODE_BUFFERED:
		return ~(hio_u64)0;
	case HIO_MODE_DONTCACHE:
		return 1;
	case HIO_MODE_DIRECT:
		return c->page_size; /* the smallest aligned body */
	default:
		break;
	}
	if (op == HIO_OP_WRITE) {
		lowest = c->write_threshold;
		if (c->sync_write_threshold < lowest)
			lowest = c->sync_write_threshold;
		if (c->stream_threshold < lowest)
			lowest = c->stream_threshold;
		lowest >>= c->pressure_shift;
		lowest >>= HIO_CONTENTION_SHIFT;
	} else {
		lowest = c->read_threshold >> c->pressure_shift;
	}
	/* A direct body is at least a page ... */
	if (lowest < c->page_size)
		lowest = c->page_size;
	/* ... but a file without O_DIRECT, or a request without an aligned body, may go DONTCACHE. */
	if (c->dontcache_threshold < lowest)
		lowest = c->dontcache_threshold;
	return lowest ? lowest : 1;
}

/*
 * The re-use history's arithmetic (HIO_FILE_REUSE, docs/policy.md), shared
 * by libhybridio's history (reuse_history.h, one table per user) and
 * hybridfs's (one per inode), so that both cut files into the same extents
 * and admit the same subset.
 *
 * A file of `size` bytes is cut into HIO_REUSE_EXTENTS extents of
 * hio_reuse_extent_bytes(size): max(size / 64, 1 MiB) rounded up to a power
 * of two.  A read is re-use when every extent it touches was read off the
 * cache within the window; it is admitted when all the data read within the
 * window fits the budget, or else when a hash of (file key, extent of its
 * first byte) falls below budget / bytes read: a stable subset, the same
 * extents every epoch, and a smaller budget admits a subset of what a
 * larger one did.
 */
#define HIO_REUSE_EXTENTS 64u
#define HIO_REUSE_MIN_EXTENT ((hio_u64)1 << 20)
#define HIO_REUSE_WINDOW_DEFAULT 600u /* seconds */

__extension__ typedef unsigned __int128 hio_u128;

/* splitmix64's finaliser: the history's hash. */
static inline hio_u64 hio_mix64(hio_u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline hio_u64 hio_reuse_extent_bytes(hio_u64 size)
{
	hio_u64 extent = HIO_REUSE_MIN_EXTENT;

	/* 2^57 x 64 extents cover any off_t: the product never overflows. */
	while (extent < ((hio_u64)1 << 57) && extent * HIO_REUSE_EXTENTS < size)
		extent <<= 1;
	return extent;
}

/* The bitmap of the extents [offset, offset + length) touches, clamped to `size`. */
static inline hio_u64 hio_reuse_extent_mask(hio_u64 size, hio_u64 offset, hio_u64 length)
{
	unsigned shift = (unsigned)__builtin_ctzll(hio_reuse_extent_bytes(size));
	hio_u64 first, last, upto;

	if (offset >= size || length == 0)
		return 0;
	if (length > size - offset)
		length = size - offset;
	first = offset >> shift;
	last = (offset + length - 1) >> shift; /* both < HIO_REUSE_EXTENTS */
	upto = last == 63 ? ~(hio_u64)0 : ((hio_u64)2 << last) - 1;
	return upto & ~(((hio_u64)1 << first) - 1);
}

/*
 * The extents [offset, offset + length) finishes: those whose last byte it
 * reads (clamped to `size`).  A read off the cache marks only these as read,
 * so a pass over a file in calls smaller than an extent does not take its
 * own earlier calls for a re-read; the pass after it does find them.
 */
static inline hio_u64 hio_reuse_finished_mask(hio_u64 size, hio_u64 offset, hio_u64 length)
{
	hio_u64 extent = hio_reuse_extent_bytes(size);
	hio_u64 mask = hio_reuse_extent_mask(size, offset, length);
	hio_u64 end;

	if (!mask)
		return 0;
	if (length > size - offset)
		length = size - offset;
	end = offset + length;
	/* Only the last extent touched can be left unfinished. */
	if (end != size && (end & (extent - 1)) != 0)
		mask &= ~((hio_u64)1 << ((end - 1) / extent));
	return mask;
}

/*
 * The extents that must have been read before for [offset, offset + length)
 * to be a re-read: those it finishes, or, when it finishes none (a call
 * inside one extent), the extent it touches.  A read that stops short of the
 * file's end inside its last extent (a trailer it does not read) is a re-read
 * of the extents it finishes.
 */
static inline hio_u64 hio_reuse_reread_mask(hio_u64 size, hio_u64 offset, hio_u64 length)
{
	hio_u64 finished = hio_reuse_finished_mask(size, offset, length);

	return finished ? finished : hio_reuse_extent_mask(size, offset, length);
}

/*
 * Is extent `extent` of file `key` in the subset that fits `budget` bytes
 * of `read_bytes` read within the window?  hash < budget * 2^64 / read_bytes,
 * computed without a division: (hash + 1) * read_bytes <= budget * 2^64.
 */
static inline bool hio_reuse_admits(hio_u64 key, hio_u64 extent, hio_u64 budget,
				    hio_u64 read_bytes)
{
	hio_u64 hash;

	if (budget == 0)
		return false;
	if (budget >= read_bytes)
		return true;
	hash = hio_mix64(key ^ hio_mix64(extent + 0x9e3779b97f4a7c15ULL));
	return ((hio_u128)hash + 1) * read_bytes <= (hio_u128)budget << 64;
}

/*
 * The automatic budget: seven eighths of the room for page cache (admitted
 * data is page cache, so the budget does not shrink as it fills with it);
 * an eighth is left for the program's own growth.
 */
static inline hio_u64 hio_reuse_budget_auto(hio_u64 page_cache_room)
{
	return page_cache_room / 8 * 7;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HYBRIDIO_POLICY_H */
