// stats_file.h - the stats document on disk.
//
// HYBRIDIO_STATS names one file for a whole program, and a program is often
// many processes: fio's idle parent and its workers, a Python program and
// the shells it runs.  Each process adds its counters to the file when it
// exits, under a lock, so the file holds the sum of every process that
// wrote to it, as a gcov .gcda file does.  A process that moved nothing
// adds zeros; it never erases one that did.
#pragma once

#include <string>

#include "hybridio/hybridio.h"

namespace hybridio {

// Writes `text` to `path` through a temporary name and a rename, so a
// reader never sees half a document.  0 or -errno.
int write_file_atomically(const std::string& path, const std::string& text);

// Adds one process's counters to the document at `path` (created when
// missing) under an exclusive flock of its directory.  0 or -errno;
// -EEXIST when `path` holds something that is not a stats document, which
// is left alone.
int add_stats_to_file(const std::string& path, const hio_stats& mine, const hio_policy_config& policy);

}  // namespace hybridio
