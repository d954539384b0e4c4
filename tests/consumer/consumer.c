/* Writes and reads back a file through the installed C API. */
#include <fcntl.h>
#include <hybridio/hybridio.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	static char out[3 << 20], in[3 << 20];
	hio_file *f;
	int err;

	if (argc != 2)
		return 2;
	memset(out, 'c', sizeof(out));
	err = hio_open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644, &f);
	if (err) {
		fprintf(stderr, "hio_open: %s\n", strerror(-err));
		return 1;
	}
	if (hio_pwrite(f, out, sizeof(out), 0) != (ssize_t)sizeof(out) || hio_fsync(f) ||
	    hio_pread(f, in, sizeof(in), 0) != (ssize_t)sizeof(in) || memcmp(in, out, sizeof(in)))
		return 1;
	puts("consumer_c ok");
	return hio_close(f) ? 1 : 0;
}
