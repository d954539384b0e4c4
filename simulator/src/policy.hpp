/* policy: the I/O policies of the library and the per-request decision they make.
 * buffered, direct and dontcache are static; hybrid switches on request size like Lustre's
 * hybrid IO (writes >= 2 MiB and reads >= 8 MiB go direct by default); async is a two-phase
 * checkpoint (copy to host memory, then persist with direct I/O) handled by the client model. */
#pragma once
#include "params.hpp"

#include <string>

namespace hiosim {

enum class Policy { Buffered, Direct, Dontcache, Hybrid, Async };
enum class Path { Buffered, Direct, Dontcache };
enum class Op { Write, Read };

Policy parse_policy(const std::string& name); // throws std::invalid_argument
const char* policy_name(Policy p);
const char* path_name(Path p);
/* The path one request of `size` bytes takes. For reads, `cached` says whether the data is in the
 * page cache: a hybrid read serves cached pages from the cache, as Lustre does. */
Path choose_path(Policy pol, Op op, double size, bool cached, const PolicyParams& pp);

} // namespace hiosim
