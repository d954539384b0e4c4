// SPDX-License-Identifier: GPL-2.0-only
/*
 * powercut - the writer and the checker of the power-cut test (run by
 * powercut.sh inside the test VM; see docs/crash.md).
 *
 *   powercut write <file> <file-id> <method> <shape> [nofsync]
 *   powercut check <name> <file> <file-id> <shape> [expect-loss]
 *   powercut replay <log-device> <target-device> <mark>
 *
 * `write` creates <file> and writes it in three generations of pieces (the
 * plan below): generation 1, fsync, generation 2 (overwrites and an
 * extension), fsync, then generation 3 (overwrites and an extension) that is
 * never synced.  The power is cut after it exits.  <method> is how each
 * piece is written: `pwrite` (plain pwrite(2): the LD_PRELOAD shim or
 * hybridfs routes it), `uring` (the program's own io_uring, each piece cut in
 * 256 KiB chunks submitted together) or `hio` (libhybridio's C API, so that
 * HYBRIDIO_WRITE_BEHIND applies).  <shape> is `aligned`, `split` (pieces
 * start and end off the 4 KiB grid; the buffer matches the offset, so the
 * body can go direct) or `bounce` (aligned pieces from a buffer one byte off
 * its alignment).  `nofsync` leaves out every fsync: the control case.
 *
 * `check`, after the cut and a remount, reads the file and compares every
 * byte with the plan: a byte written by a synced generation must hold that
 * generation (or a later, unsynced one); a byte no synced generation wrote
 * must be zero (a hole) or hold an unsynced generation; the size must be at
 * least what was synced and at most what was ever written.  It prints
 * "PASS <name>" or "FAIL <name>: <why>" and exits 0 (intact), 1 (fsync'd
 * data lost), 2 (a byte that was never written at that place) or 3 (the
 * check could not run).  With `expect-loss` it passes only on loss: the
 * control proves the cut really drops what was not synced.
 *
 * `replay` rebuilds, from a dm-log-writes log, the disk a power cut at
 * <mark> leaves behind when the device has a volatile write cache (below).
 *
 * Every byte is a function of (file id, generation, offset): the 8-byte
 * little-endian word at offset o & ~7 is STAMP_MAGIC ^ gen << 56 ^ id << 48
 * ^ (o & ~7).  A byte from another file, another generation or another
 * place therefore differs from the expected one (1 in 256 per byte by
 * chance, never for a whole run), and a bad word is decoded in the report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hybridio/hybridio.h"

#define KIB UINT64_C(1024)
#define STAMP_MAGIC UINT64_C(0x5a17c0debeef1234)
#define OFFSET_MASK ((UINT64_C(1) << 48) - 1)
#define GENERATIONS 3
#define LAST_SYNCED_GEN 2
#define URING_CHUNK (256 * KIB)

/* The plan, in KiB before the shape's skew; generations in order. */
static const struct piece {
	int gen;
	uint64_t off_kib, len_kib;
} plan[] = {
	{ 1, 0, 1024 }, { 1, 1024, 1024 }, { 1, 2048, 1024 }, { 1, 3072, 1024 },
	{ 2, 1024, 1024 }, { 2, 4096, 1024 },  /* overwrite, extend; synced */
	{ 3, 512, 1024 }, { 3, 5120, 1024 },   /* overwrite, extend; never synced */
};
#define PIECES (sizeof(plan) / sizeof(plan[0]))

enum shape { SHAPE_ALIGNED, SHAPE_SPLIT, SHAPE_BOUNCE };

static int parse_shape(const char *s, enum shape *out)
{
	if (!strcmp(s, "aligned")) *out = SHAPE_ALIGNED;
	else if (!strcmp(s, "split")) *out = SHAPE_SPLIT;
	else if (!strcmp(s, "bounce")) *out = SHAPE_BOUNCE;
	else return -1;
	return 0;
}

/* A piece's byte range after the shape's skew. */
static void piece_range(const struct piece *p, enum shape shape, uint64_t *off, uint64_t *len)
{
	*off = p->off_kib * KIB;
	*len = p->len_kib * KIB;
	if (shape == SHAPE_SPLIT) {
		/* Unaligned head and tail around an aligned body of about 1 MiB. */
		*off += 1000;
		*len += 2500;
	}
}

/* Where in its 4 KiB-aligned buffer a piece's data starts. */
static size_t buffer_skew(enum shape shape, uint64_t off)
{
	if (shape == SHAPE_SPLIT) return off % 4096; /* body memory aligned like the body */
	if (shape == SHAPE_BOUNCE) return 1;
	return 0;
}

static uint64_t stamp_word(int id, int gen, uint64_t o8)
{
	return STAMP_MAGIC ^ (uint64_t)gen << 56 ^ (uint64_t)id << 48 ^ o8;
}

static unsigned char stamp(int id, int gen, uint64_t o)
{
	return (unsigned char)(stamp_word(id, gen, o & ~UINT64_C(7)) >> (8 * (o & 7)));
}

static void fill(unsigned char *dst, int id, int gen, uint64_t off, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++) dst[i] = stamp(id, gen, off + i);
}

/* ---- write ---- */

static int pwrite_all(int fd, const unsigned char *buf, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) return n < 0 ? -errno : -EIO;
		buf += n, len -= (uint64_t)n, off += (uint64_t)n;
	}
	return 0;
}

/* All of a piece's chunks in flight together on one ring. */
static int uring_write_all(struct io_uring *ring, int fd, const unsigned char *buf, uint64_t len,
			   uint64_t off)
{
	unsigned queued = 0;
	for (uint64_t done = 0; done < len; done += URING_CHUNK) {
		uint64_t n = len - done < URING_CHUNK ? len - done : URING_CHUNK;
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		if (!sqe) return -EBUSY;
		io_uring_prep_write(sqe, fd, buf + done, (unsigned)n, off + done);
		sqe->user_data = n;
		queued++;
	}
	int err = io_uring_submit(ring);
	if (err < 0) return err;
	int ret = 0;
	while (queued--) {
		struct io_uring_cqe *cqe;
		err = io_uring_wait_cqe(ring, &cqe);
		if (err < 0) return err;
		if (cqe->res < 0) ret = cqe->res;
		else if ((uint64_t)cqe->res != cqe->user_data && !ret) ret = -EIO; /* short */
		io_uring_cqe_seen(ring, cqe);
	}
	return ret;
}

static int fsync_dir_of(const char *path)
{
	char copy[4096];
	snprintf(copy, sizeof(copy), "%s", path);
	int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (dfd < 0) return -errno;
	int err = fsync(dfd) ? -errno : 0;
	close(dfd);
	return err;
}

static int cmd_write(const char *path, int id, const char *method, enum shape shape, int do_fsync)
{
	int use_hio = !strcmp(method, "hio"), use_uring = !strcmp(method, "uring");
	if (!use_hio && !use_uring && strcmp(method, "pwrite")) {
		fprintf(stderr, "powercut: unknown method %s\n", method);
		return 3;
	}
	int fd = -1, err = 0;
	hio_file *hf = NULL;
	struct io_uring ring;
	const char *step = "open";
	if (use_hio) {
		err = hio_open(path, O_CREAT | O_TRUNC | O_RDWR, 0644, &hf);
	} else {
		fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
		if (fd < 0) err = -errno;
	}
	if (!err && use_uring) {
		step = "io_uring_queue_init";
		err = io_uring_queue_init(2 * KIB * KIB / URING_CHUNK, &ring, 0);
	}
	unsigned char *mem = NULL;
	if (!err && posix_memalign((void **)&mem, 4096, 2 * KIB * KIB)) err = -ENOMEM, step = "malloc";

	for (size_t i = 0; !err && i < PIECES; i++) {
		uint64_t off, len;
		piece_range(&plan[i], shape, &off, &len);
		unsigned char *buf = mem + buffer_skew(shape, off);
		fill(buf, id, plan[i].gen, off, len);
		step = "write";
		if (use_hio) {
			ssize_t n = hio_pwrite(hf, buf, len, (off_t)off);
			err = n < 0 ? (int)n : (uint64_t)n != len ? -EIO : 0;
		} else if (use_uring) {
			err = uring_write_all(&ring, fd, buf, len, off);
		} else {
			err = pwrite_all(fd, buf, len, off);
		}
		int gen_done = i + 1 == PIECES || plan[i + 1].gen != plan[i].gen;
		if (!err && gen_done && plan[i].gen <= LAST_SYNCED_GEN && do_fsync) {
			step = "fsync";
			err = use_hio ? hio_fsync(hf) : fsync(fd) ? -errno : 0;
			/* A careful program makes the new name durable too. */
			if (!err && plan[i].gen == 1) step = "fsync of the directory", err = fsync_dir_of(path);
		}
	}
	if (use_uring && fd >= 0) io_uring_queue_exit(&ring);
	int cerr = use_hio ? (hf ? hio_close(hf) : 0) : fd >= 0 && close(fd) ? -errno : 0;
	if (!err && cerr) err = cerr, step = "close";
	free(mem);
	if (err) {
		fprintf(stderr, "powercut: %s %s: %s\n", step, path, strerror(-err));
		return 3;
	}
	return 0;
}

/* ---- check ---- */

struct model {
	uint64_t synced_size, max_size;
	unsigned char *synced_gen;  /* per byte: last synced generation that wrote it, 0: none */
	unsigned char *unsynced;    /* per byte: bit g set if unsynced generation g wrote it */
};

static int build_model(enum shape shape, struct model *m)
{
	m->synced_size = m->max_size = 0;
	for (size_t i = 0; i < PIECES; i++) {
		uint64_t off, len;
		piece_range(&plan[i], shape, &off, &len);
		if (off + len > m->max_size) m->max_size = off + len;
		if (plan[i].gen <= LAST_SYNCED_GEN && off + len > m->synced_size) m->synced_size = off + len;
	}
	m->synced_gen = calloc(m->max_size, 1);
	m->unsynced = calloc(m->max_size, 1);
	if (!m->synced_gen || !m->unsynced) return -ENOMEM;
	for (size_t i = 0; i < PIECES; i++) {
		uint64_t off, len;
		piece_range(&plan[i], shape, &off, &len);
		for (uint64_t o = off; o < off + len; o++) {
			if (plan[i].gen <= LAST_SYNCED_GEN) m->synced_gen[o] = (unsigned char)plan[i].gen;
			else m->unsynced[o] |= (unsigned char)(1u << plan[i].gen);
		}
	}
	return 0;
}

static int byte_ok(const struct model *m, int id, uint64_t o, unsigned char v)
{
	int s = m->synced_gen[o];
	if (s ? v == stamp(id, s, o) : v == 0) return 1;
	for (int g = 1; g <= GENERATIONS; g++)
		if ((m->unsynced[o] >> g & 1) && v == stamp(id, g, o)) return 1;
	return 0;
}

/* What the 8-byte word around `o` holds, in words a person can act on. */
static void describe(const unsigned char *data, uint64_t size, uint64_t o, char *out, size_t n)
{
	uint64_t o8 = o & ~UINT64_C(7), w = 0;
	if (o8 + 8 > size) {
		snprintf(out, n, "byte 0x%02x", data[o]);
		return;
	}
	for (int i = 7; i >= 0; i--) w = w << 8 | data[o8 + (uint64_t)i];
	uint64_t x = w ^ STAMP_MAGIC, where = x & OFFSET_MASK;
	if (w == 0) snprintf(out, n, "zeros");
	else if (x >> 56 <= GENERATIONS && where < ((uint64_t)1 << 40))
		snprintf(out, n, "file %" PRIu64 " generation %" PRIu64 " offset %" PRIu64,
			 x >> 48 & 0xff, x >> 56, where);
	else snprintf(out, n, "unknown bytes %016" PRIx64, w);
}

static int cmd_check(const char *name, const char *path, int id, enum shape shape, int expect_loss)
{
	struct model m;
	if (build_model(shape, &m)) {
		printf("FAIL %s: out of memory\n", name);
		return 3;
	}
	char why[512] = "";
	int verdict = 0; /* 0 intact, 1 loss, 2 never-written bytes, 3 cannot check */
	unsigned char *data = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		verdict = 1;
		snprintf(why, sizeof(why), "the file is gone (%" PRIu64 " bytes were synced)", m.synced_size);
	} else if (fd < 0 || fstat(fd, &st)) {
		verdict = 3;
		snprintf(why, sizeof(why), "open/fstat %s: %s", path, strerror(errno));
	} else if ((uint64_t)st.st_size > m.max_size) {
		verdict = 2;
		snprintf(why, sizeof(why), "size %jd, more than was ever written (%" PRIu64 ")",
			 (intmax_t)st.st_size, m.max_size);
	} else {
		uint64_t size = (uint64_t)st.st_size, got = 0;
		data = malloc(size ? size : 1);
		while (data && got < size) {
			ssize_t n = pread(fd, data + got, size - got, (off_t)got);
			if (n <= 0) break;
			got += (uint64_t)n;
		}
		if (!data || got != size) {
			verdict = 3;
			snprintf(why, sizeof(why), "read %" PRIu64 " of %" PRIu64 " bytes: %s", got, size,
				 strerror(errno));
		} else {
			uint64_t lost = 0, foreign = 0, first_lost = 0, first_foreign = 0;
			for (uint64_t o = 0; o < size; o++) {
				if (byte_ok(&m, id, o, data[o])) continue;
				if (m.synced_gen[o]) {
					if (!lost++) first_lost = o;
				} else if (!foreign++) {
					first_foreign = o;
				}
			}
			char found[128];
			if (foreign) {
				verdict = 2;
				describe(data, size, first_foreign, found, sizeof(found));
				snprintf(why, sizeof(why),
					 "%" PRIu64 " bytes that were never written there, the first at %" PRIu64
					 " (found %s)", foreign, first_foreign, found);
			} else if (lost) {
				verdict = 1;
				describe(data, size, first_lost, found, sizeof(found));
				snprintf(why, sizeof(why),
					 "%" PRIu64 " fsync'd bytes lost, the first at %" PRIu64
					 " (expected generation %d, found %s)", lost, first_lost,
					 m.synced_gen[first_lost], found);
			} else if (size < m.synced_size) {
				verdict = 1;
				snprintf(why, sizeof(why), "size %" PRIu64 ", less than the %" PRIu64 " synced",
					 size, m.synced_size);
			}
		}
	}
	if (fd >= 0) close(fd);
	free(data);
	free(m.synced_gen);
	free(m.unsynced);

	if (expect_loss) {
		if (verdict == 1) printf("PASS %s (%s)\n", name, why);
		else if (verdict == 0)
			printf("FAIL %s: unsynced data survived the cut, so a missing fsync would go unnoticed\n", name);
		else printf("FAIL %s: %s\n", name, why);
		return verdict == 1 ? 0 : verdict ? verdict : 1;
	}
	if (verdict == 0) printf("PASS %s\n", name);
	else printf("FAIL %s: %s\n", name, why);
	return verdict;
}

/* ---- replay of a dm-log-writes log ---- */

/*
 * The log's on-disk format (Documentation/admin-guide/device-mapper/
 * log-writes.rst): a super block in sector 0, then one entry per sector,
 * each followed by its data sectors (none for a discard or a mark; a mark
 * carries its name after the entry's fields).  Little-endian throughout.
 */
#define LOG_MAGIC UINT64_C(0x6a736677736872)
#define LOG_FLUSH (1u << 0)
#define LOG_FUA (1u << 1)
#define LOG_DISCARD (1u << 2)
#define LOG_MARK (1u << 3)
#define LOG_KNOWN_FLAGS 0x1fu
#define SECTOR 512

struct log_entry_pos {
	uint64_t at;                   /* log sector of the entry */
	uint64_t sector, nr_sectors, flags;
};

static uint64_t le64_at(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
	return v;
}

/*
 * Replays onto <target> (a copy of the device as it was when logging began)
 * what a power cut at <mark> guarantees to be on a disk with a volatile
 * write cache: every write logged before the last flush that precedes the
 * mark, and the FUA writes between that flush and the mark.  Writes that were
 * only acknowledged, never flushed, are left out.
 */
static int cmd_replay(const char *log_dev, const char *target, const char *mark)
{
	unsigned char sec[SECTOR];
	int lfd = open(log_dev, O_RDONLY | O_CLOEXEC), tfd = open(target, O_WRONLY | O_CLOEXEC);
	if (lfd < 0 || tfd < 0) {
		printf("FAIL powercut-replay: open %s: %s\n", lfd < 0 ? log_dev : target, strerror(errno));
		return 3;
	}
	if (pread(lfd, sec, SECTOR, 0) != SECTOR || le64_at(sec) != LOG_MAGIC ||
	    (sec[24] | sec[25] << 8) != SECTOR) {
		printf("FAIL powercut-replay: %s holds no dm-log-writes log with 512-byte sectors\n", log_dev);
		return 3;
	}
	struct log_entry_pos *e = NULL;
	size_t n = 0, cap = 0, last_flush = SIZE_MAX;
	int found = 0;
	for (uint64_t at = 1; !found; n++) {
		if (pread(lfd, sec, SECTOR, (off_t)(at * SECTOR)) != SECTOR) break;
		uint64_t flags = le64_at(sec + 16), data_len = le64_at(sec + 24);
		if (flags & ~(uint64_t)LOG_KNOWN_FLAGS) break; /* past the end of the log */
		if (n == cap && !(e = realloc(e, (cap = cap ? 2 * cap : 1024) * sizeof(*e)))) break;
		e[n] = (struct log_entry_pos){ at, le64_at(sec), le64_at(sec + 8), flags };
		if (flags & LOG_MARK) {
			found = data_len == strlen(mark) && data_len < SECTOR - 32 &&
				!memcmp(sec + 32, mark, data_len);
			at++;
			continue;
		}
		if (flags & LOG_FLUSH) last_flush = n;
		at += 1 + ((flags & LOG_DISCARD) ? 0 : e[n].nr_sectors);
	}
	if (!found) {
		printf("FAIL powercut-replay: no mark '%s' in the log (%zu entries read)\n", mark, n);
		free(e);
		return 3;
	}
	unsigned char *buf = malloc(1024 * SECTOR);
	size_t replayed = 0, fua_kept = 0, dropped = 0;
	int err = buf ? 0 : ENOMEM;
	for (size_t i = 0; !err && i + 1 < n; i++) {
		int durable = (last_flush != SIZE_MAX && i <= last_flush) || (e[i].flags & LOG_FUA);
		if (e[i].flags & LOG_MARK) continue;
		if (!durable) {
			dropped++;
			continue;
		}
		if (i > last_flush || last_flush == SIZE_MAX) fua_kept++;
		for (uint64_t done = 0; !err && done < e[i].nr_sectors;) {
			uint64_t k = e[i].nr_sectors - done < 1024 ? e[i].nr_sectors - done : 1024;
			if (e[i].flags & LOG_DISCARD) memset(buf, 0, k * SECTOR);
			else if (pread(lfd, buf, k * SECTOR, (off_t)((e[i].at + 1 + done) * SECTOR)) != (ssize_t)(k * SECTOR))
				err = errno ? errno : EIO;
			if (!err && pwrite(tfd, buf, k * SECTOR, (off_t)((e[i].sector + done) * SECTOR)) != (ssize_t)(k * SECTOR))
				err = errno ? errno : EIO;
			done += k;
		}
		replayed++;
	}
	if (!err && fsync(tfd)) err = errno;
	free(buf);
	free(e);
	close(lfd);
	close(tfd);
	if (err) {
		printf("FAIL powercut-replay: %s\n", strerror(err));
		return 3;
	}
	printf("PASS powercut-replay (%zu entries before the mark: %zu replayed, %zu FUA after the last flush, "
	       "%zu never flushed left out)\n", n - 1, replayed, fua_kept, dropped);
	return 0;
}

int main(int argc, char **argv)
{
	enum shape shape;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 6 && !strcmp(argv[1], "write") && !parse_shape(argv[5], &shape))
		return cmd_write(argv[2], atoi(argv[3]), argv[4], shape,
				 !(argc > 6 && !strcmp(argv[6], "nofsync")));
	if (argc >= 6 && !strcmp(argv[1], "check") && !parse_shape(argv[5], &shape))
		return cmd_check(argv[2], argv[3], atoi(argv[4]), shape,
				 argc > 6 && !strcmp(argv[6], "expect-loss"));
	if (argc == 5 && !strcmp(argv[1], "replay")) return cmd_replay(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: powercut write <file> <file-id> pwrite|uring|hio aligned|split|bounce [nofsync]\n"
			"       powercut check <name> <file> <file-id> aligned|split|bounce [expect-loss]\n"
			"       powercut replay <log-device> <target-device> <mark>\n");
	return 3;
}
