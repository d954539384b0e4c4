// temp_dir.h - a scratch directory on a real filesystem for tests, removed
// with its contents at the end of the test.
//
// It is created under $HYBRIDIO_TEST_DIR, else the current directory (ctest
// runs tests in the build tree, on the same filesystem as the sources) -
// not /tmp, which may be tmpfs, where O_DIRECT behaves differently.
#pragma once

#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace hybridio::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = getenv("HYBRIDIO_TEST_DIR");
    std::string pattern = std::string(base && *base ? base : ".") + "/hio-test-XXXXXX";
    char* made = mkdtemp(pattern.data());
    if (made) path_ = made;
  }
  ~TempDir() {
    if (!path_.empty())
      nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); },
           16, FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace hybridio::testing
