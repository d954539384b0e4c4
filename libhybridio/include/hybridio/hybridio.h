/* SPDX-License-Identifier: MIT */
/*
 * hybridio/hybridio.h - the Hybrid-IO C API.
 *
 * A hio_file wraps one open regular file.  Each read or write is routed by
 * the policy (see hybridio/policy.h and docs/policy.md) to the page cache,
 * to direct I/O through a lazily opened O_DIRECT twin of the file, or to
 * uncached buffered I/O (RWF_DONTCACHE), and always leaves exactly the bytes
 * a plain POSIX program would have left.
 *
 * Errors: functions return 0 (or a byte count) on success and a negative
 * errno value on failure; errno itself is left as the caller set it.
 *
 * Threads: hio_pread/hio_pwrite/hio_fsync on one hio_file may run from many
 * threads at once.  hio_read/hio_write share the file position like read(2)
 * and write(2) on one descriptor.  hio_close must not race with any other
 * call on the same hio_file.
 *
 * Configuration comes from the environment (HYBRIDIO_POLICY,
 * HYBRIDIO_WRITE_THRESHOLD, HYBRIDIO_READ_THRESHOLD, HYBRIDIO_STATS,
 * HYBRIDIO_TRACE, HYBRIDIO_LOG, HYBRIDIO_CONFIG, ...), read once on first
 * use; see docs/configuration.md.
 */
#ifndef HYBRIDIO_HYBRIDIO_H
#define HYBRIDIO_HYBRIDIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hybridio/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HYBRIDIO_VERSION_MAJOR 0
#define HYBRIDIO_VERSION_MINOR 1
#define HYBRIDIO_STATS_SCHEMA "hybridio-stats/1"

/* Marks the exported API; everything else in the library is hidden. */
#if defined(__GNUC__)
#define HIO_API __attribute__((visibility("default")))
#else
#define HIO_API
#endif

typedef struct hio_file hio_file;

/* Opens `path` like open(2) (O_CLOEXEC is always added). */
HIO_API int hio_open(const char *path, int flags, mode_t mode, hio_file **out);

/*
 * Wraps an already open descriptor.  With `owns_fd` the descriptor is closed
 * by hio_close; otherwise it stays open and belongs to the caller.
 */
HIO_API int hio_adopt(int fd, int owns_fd, hio_file **out);

/* The caller-visible (buffered) descriptor, e.g. for fstat or mmap. */
HIO_API int hio_fd(const hio_file *f);

/* Like pread(2)/pwrite(2): bytes transferred (short at EOF) or -errno. */
HIO_API ssize_t hio_pread(hio_file *f, void *buf, size_t len, off_t offset);
HIO_API ssize_t hio_pwrite(hio_file *f, const void *buf, size_t len, off_t offset);

/* Like read(2)/write(2): use and advance the descriptor's file position. */
HIO_API ssize_t hio_read(hio_file *f, void *buf, size_t len);
HIO_API ssize_t hio_write(hio_file *f, const void *buf, size_t len);

/* Durability: all data written through any path reaches stable storage. */
HIO_API int hio_fsync(hio_file *f);
HIO_API int hio_fdatasync(hio_file *f);

/* ftruncate(2). */
HIO_API int hio_ftruncate(hio_file *f, off_t length);

/*
 * Tells the policy that the file is (or no longer is) memory-mapped, so
 * that it keeps all I/O in the page cache while a mapping exists.
 */
HIO_API void hio_set_mapped(hio_file *f, int mapped);

/*
 * Waits for the file's queued write-behind writes, closes its direct twin
 * and, if owned, its descriptor, and frees `f` in every case.  Returns 0,
 * or -errno: a write-behind write that failed after its call had returned
 * (it takes precedence), else close(2)'s error on the owned descriptor
 * (EINTR counts as success: Linux has released the descriptor anyway).
 */
HIO_API int hio_close(hio_file *f);

/* The rules counted in the original layout of struct hio_stats (fixed: ABI). */
#define HIO_STATS_RULES_V1 17
#define HIO_STATS_RULES_EXT 15

/* Process-wide counters since start (or the last hio_stats_reset). */
struct hio_stats {
	uint64_t requests[2][HIO_PATH_COUNT]; /* [HIO_OP_*][HIO_PATH_*] */
	uint64_t bytes[2][HIO_PATH_COUNT];
	/* Requests and bytes per rule, for the first HIO_STATS_RULES_V1 rules;
	 * later rules are in rule_requests_ext/rule_bytes_ext below.  Use
	 * hio_stats_rule_requests()/hio_stats_rule_bytes() for any rule. */
	uint64_t rule_requests[HIO_STATS_RULES_V1];
	uint64_t rule_bytes[HIO_STATS_RULES_V1];
	uint64_t splits;              /* requests cut into head/body/tail */
	uint64_t bounces;             /* direct bodies staged through an aligned buffer */
	uint64_t bounce_bytes;
	uint64_t direct_open_refused; /* files whose O_DIRECT twin could not be opened */
	uint64_t direct_io_refused;   /* files whose first direct I/O failed with EINVAL */
	uint64_t dontcache_refused;   /* files on which RWF_DONTCACHE was refused */
	uint64_t probe_cachestat;     /* cache probes by cachestat(2) */
	uint64_t probe_mincore;       /* cache probes by mmap + mincore(2) */
	uint64_t probe_failed;        /* probes that could not answer */
	uint64_t fsyncs;
	uint64_t cached_first_reads;  /* direct-bound reads whose cached prefix came from the cache */
	uint64_t cached_first_bytes;
	/* Appended with the parallel direct engine. */
	uint64_t uring_requests;      /* direct bodies cut into chunks in flight together (io_uring) */
	uint64_t uring_chunks;        /* chunks submitted */
	uint64_t uring_retries;       /* chunks retried synchronously after -EAGAIN/-EINTR */
	uint64_t uring_trimmed;       /* failed writes whose later chunks were cut back off the file size */
	uint64_t uring_unavailable;   /* 1 when io_uring was found unusable in this process */
	uint64_t sync_fallback_requests; /* multi-chunk bodies submitted synchronously instead */
	/* Rules HIO_STATS_RULES_V1 and later (HIO_RULE_CONTENDED, ...). */
	uint64_t rule_requests_ext[HIO_STATS_RULES_EXT];
	uint64_t rule_bytes_ext[HIO_STATS_RULES_EXT];
	/* Appended with write-behind. */
	uint64_t write_behind_writes; /* direct writes that returned once staged (write-behind) */
	uint64_t write_behind_bytes;
	uint64_t write_behind_stalls; /* writes that waited for staging memory */
	uint64_t write_behind_waits;  /* reads, writes, fsyncs, closes that waited for queued writes */
	uint64_t write_behind_errors; /* deferred write errors reported by fsync/close */
	/* Always 0: nothing is read ahead across calls (kept for the layout). */
	uint64_t read_ahead_hits;
	uint64_t read_ahead_bytes;
	uint64_t read_ahead_dropped;
	/* Appended with learned thresholds (docs/policy.md). */
	uint64_t learn_samples;       /* requests whose cost was measured */
	uint64_t learn_deferred;      /* syncs and closes whose time was charged to writes */
	uint64_t learn_explored_buffered;  /* bytes sent down a path the policy did not choose, to measure it */
	uint64_t learn_explored_direct;
	uint64_t learn_explored_dontcache;
	uint64_t learn_moves;         /* samples that moved a learned crossover or off-cache path */
	/* Appended with drop-behind writes. */
	uint64_t drop_behind_writes;  /* uncached writes whose writeback and page drop ran behind the call */
	uint64_t drop_behind_bytes;
	uint64_t drop_behind_waits;   /* of those, writes that first waited for earlier ones (drop_behind_limit) */
	uint64_t drop_behind_refused; /* of those, writes whose file could not be opened again (pages left cached) */
	/* Appended with re-use admission (the reuse rule, docs/policy.md). */
	uint64_t reuse_admitted_reads; /* off-cache reads of data read recently, sent through the cache */
	uint64_t reuse_admitted_bytes;
	uint64_t reuse_hit_reads;      /* reads found in the cache that the reuse rule had admitted */
	uint64_t reuse_hit_bytes;
};

/* Requests and bytes decided by `rule`, wherever the struct keeps them. */
static inline uint64_t hio_stats_rule_requests(const struct hio_stats *s, enum hio_rule rule)
{
	unsigned r = (unsigned)rule;
	if (r < HIO_STATS_RULES_V1) return s->rule_requests[r];
	return r - HIO_STATS_RULES_V1 < HIO_STATS_RULES_EXT ? s->rule_requests_ext[r - HIO_STATS_RULES_V1] : 0;
}

static inline uint64_t hio_stats_rule_bytes(const struct hio_stats *s, enum hio_rule rule)
{
	unsigned r = (unsigned)rule;
	if (r < HIO_STATS_RULES_V1) return s->rule_bytes[r];
	return r - HIO_STATS_RULES_V1 < HIO_STATS_RULES_EXT ? s->rule_bytes_ext[r - HIO_STATS_RULES_V1] : 0;
}

HIO_API void hio_stats_get(struct hio_stats *out);
HIO_API void hio_stats_reset(void);

/* Writes the counters as JSON (schema HYBRIDIO_STATS_SCHEMA) to `path`. */
HIO_API int hio_stats_write_json(const char *path);

/*
 * Forgets the re-use history (docs/policy.md, "Re-use") that the calling
 * user's processes share: every later read is judged as a first read.
 * 0, or a negative errno value (-ENOENT: no history is kept).
 */
HIO_API int hio_reuse_forget(void);

/*
 * The engine's settings: how large direct requests are executed (not where
 * they go: that is the policy).
 */
struct hio_engine_config {
	uint32_t queue_depth;        /* chunks of one request in flight together (1-256) */
	uint64_t chunk_size;         /* bytes per chunk (power of two, 64 KiB - 64 MiB) */
	int uring;                   /* 1: io_uring where available; 0: synchronous submission */
	int write_behind;            /* 1: direct writes return once staged (docs/architecture.md) */
	uint64_t write_behind_limit; /* staging memory for write-behind, per process (>= 1 MiB) */
	/* Ignored, and 0 from hio_engine_get(): nothing is read ahead across calls (kept for the layout). */
	uint64_t read_ahead;
};

/* The engine settings in effect (after environment and config file). */
HIO_API void hio_engine_get(struct hio_engine_config *out);

/*
 * Replaces the engine settings for all files; out-of-range values are clamped
 * to the limits that `hybridio config` lists (docs/configuration.md).
 */
HIO_API void hio_engine_set(const struct hio_engine_config *cfg);

/* The effective policy configuration (after environment and config file). */
HIO_API void hio_policy_get(struct hio_policy_config *out);

/* Replaces the policy configuration for all files, e.g. from a program's own options. */
HIO_API void hio_policy_set(const struct hio_policy_config *cfg);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HYBRIDIO_HYBRIDIO_H */
