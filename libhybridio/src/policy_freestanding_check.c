/* Compiled with -ffreestanding -std=c99 -Wconversion -Werror: proves the
 * policy core needs no libc, as the kernel module requires. */
#include "hybridio/policy.h"

enum hio_path hio_freestanding_check(const struct hio_request *r, struct hio_decision *d);

enum hio_path hio_freestanding_check(const struct hio_request *r, struct hio_decision *d)
{
	struct hio_policy_config c;

	hio_policy_config_defaults(&c);
	return hio_policy_decide(&c, r, d);
}
