// learned_store.h - learned path costs on disk, one small text file per
// filesystem, so that the next run on that filesystem starts informed.
//
// Where: HYBRIDIO_STATE_DIR (the `state_dir` setting) when set, else
// $XDG_STATE_HOME/hybridio/learned, else ~/.local/state/hybridio/learned.
// A file is named by the filesystem's stable key (statfs f_type and f_fsid)
// and written through a temporary name and a rename; readers take what
// they understand and ignore the rest.  Format (docs/policy.md):
//
//   # hybridio learned path costs
//   schema hybridio-learned/1
//   fs ef53-1b2c3d4e5f607182
//   write 4M direct 12 0.4501 0.0012 0 0 0
//   randread 64M dontcache 3 0.4102 0.0009 0 0 0
//   (op - read, write, or randread for reads at random (FsCostSet) -, size
//   class, path, samples, ns per byte and its variance, then the same for
//   the deferred cost: flushes, ns per byte, variance)
//
// Every function is safe from any thread and never throws; failures are
// return values (the caller logs them at debug level: persistence is a
// convenience, never a reason to disturb the program).
#pragma once

#include <string>

#include "path_costs.h"

namespace hybridio {

// The state directory for a configured `state_dir` ("" = the XDG default);
// "" when not even a home directory is known.
std::string learned_state_dir(const std::string& configured);

// The stable key of the filesystem holding open file `fd`; "" when statfs fails.
std::string filesystem_key(int fd);

// The text of a learned file for filesystem `key`, and its reader (false on
// a text that is not one; estimates read up to a bad line are kept).
std::string learned_text(const std::string& key, const FsCostSet& costs);
bool parse_learned(const std::string& text, FsCostSet* costs);

// Loads `dir`/`key`: false when missing or not readable.
bool load_learned(const std::string& dir, const std::string& key, FsCostSet* costs);
// Writes `dir`/`key` atomically, creating `dir` when needed.  0 or -errno.
int save_learned(const std::string& dir, const std::string& key, const FsCostSet& costs);

}  // namespace hybridio
