/* A statically linked writer: LD_PRELOAD cannot reach it, and it must
 * simply keep working.  Writes 8 MiB of a fixed pattern to argv[1] ("-" for
 * standard output). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	int fd, i;

	if (argc != 2)
		return 2;
	fd = strcmp(argv[1], "-") ? open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (fd < 0)
		return 1;
	for (i = 0; i < 8; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	}
	return fsync(fd) == 0 || fd == 1 ? 0 : 1;
}
