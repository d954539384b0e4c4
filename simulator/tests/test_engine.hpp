/* test_engine: creates the one SimGrid Engine a test process may have, with the fluid CM02
 * network model hybridio-sim uses by default. ctest runs each test in its own process. */
#pragma once
#include <simgrid/s4u/Engine.hpp>

namespace hiosim::test {

inline void make_engine()
{
  static char a0[] = "hybridio-sim-test";
  static char a1[] = "--cfg=network/model:CM02";
  static char a2[] = "--cfg=network/crosstraffic:0";
  static char a3[] = "--log=root.thresh:critical";
  static char* argv[] = {a0, a1, a2, a3, nullptr};
  static int argc = 4;
  static simgrid::s4u::Engine engine(&argc, argv);
}

} // namespace hiosim::test
