// Uses the installed C++ API: RAII file, exceptions, counters.
#include <fcntl.h>

#include <cstdio>
#include <hybridio/hybridio.hpp>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::vector<char> data(4 << 20, 'x');
  {
    hybridio::File f(argv[1], O_RDWR | O_CREAT | O_TRUNC);
    f.pwrite(data.data(), data.size(), 0);
    f.fsync();
  }
  try {
    hybridio::File missing("/nonexistent/dir/file", O_RDONLY);
    return 1;
  } catch (const std::system_error& e) {
    if (e.code().value() != ENOENT) return 1;
  }
  std::printf("consumer_cxx ok, %llu requests\n",
              static_cast<unsigned long long>(hybridio::stats().requests[HIO_OP_WRITE][HIO_PATH_DIRECT] +
                                              hybridio::stats().requests[HIO_OP_WRITE][HIO_PATH_BUFFERED]));
  return 0;
}
