# dontcache_readahead.py F FLAGS FROM_MIB N [FADVISE]: N consecutive 1 MiB preadv2(FLAGS) calls of F
# from FROM_MIB on (FADVISE: an os.POSIX_FADV_* name applied first), then the bytes of F in the page cache.
import os, sys, subprocess
f = sys.argv[1]; flags = int(sys.argv[2], 0); off = int(sys.argv[3]) << 20; n = int(sys.argv[4])
fd = os.open(f, os.O_RDONLY)
if len(sys.argv) > 5: os.posix_fadvise(fd, 0, 0, getattr(os, sys.argv[5]))
b = bytearray(1 << 20)
for i in range(n): os.preadv(fd, [b], off + (i << 20), flags)
print(subprocess.run(["fincore", "-b", "-n", "-o", "RES", f], capture_output=True, text=True).stdout.strip())
