// learned_store.h - a filesystem's learned state (learner.h) on disk, one
// small text file per filesystem, so that the next process there starts
// where the last one left off.
//
// Where: HYBRIDIO_STATE_DIR (the `state_dir` setting) when set, else
// $XDG_STATE_HOME/hybridio/learned, else ~/.local/state/hybridio/learned.
// A file is named by the filesystem's stable key (statfs f_type and f_fsid)
// and written through a temporary name and a rename.  Format:
//
//   schema hybridio-learned/4
//   fs ef53-1b2c3d4e5f607182
//   side write 4M dontcache        (crossover: a size, "none" or "configured")
//   flush dontcache 7 0.1902 0.0011   (path, flushes, ns per byte written, variance)
//   write 4M direct 12 0.4501 0.0012  (op, size class, path, samples, ns per byte, variance)
//
// A file of another schema is ignored (the process starts from the
// configuration).  Every function is safe from any thread and never
// throws; failures are values.
#pragma once

#include <string>

#include "learn/learner.h"

namespace hybridio {

// The state directory for a configured `state_dir` ("" = the XDG default);
// "" when not even a home directory is known.
std::string learned_state_dir(const std::string& configured);

// The stable key of the filesystem holding open file `fd`; "" when statfs fails.
std::string filesystem_key(int fd);

// The text of a learned file, and its reader: false on a text that is not
// one (what was read up to the bad line is kept).
std::string learned_text(const std::string& key, const FsModel& model);
bool parse_learned(const std::string& text, FsModel* model);

// Loads `dir`/`key`: false when missing or not readable.
bool load_learned(const std::string& dir, const std::string& key, FsModel* model);
// Writes `dir`/`key` atomically, creating `dir` when needed.  0 or -errno.
int save_learned(const std::string& dir, const std::string& key, const FsModel& model);

}  // namespace hybridio
