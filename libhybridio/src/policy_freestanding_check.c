/* Compiled with -ffreestanding -std=c99 -Wconversion -Werror: proves the
 * policy core needs no libc, as the kernel module requires. */
#include "hybridio/policy.h"
#include "policy_cases.h"

enum hio_path hio_freestanding_check(const struct hio_request *r, struct hio_decision *d);

enum hio_path hio_freestanding_check(const struct hio_request *r, struct hio_decision *d)
{
	struct hio_policy_config c;

	hio_policy_config_defaults(&c);
	return hio_policy_decide(&c, r, d);
}

int hio_freestanding_cases(void);

/* The shared table (policy_cases.h) compiles freestanding too: the module's test runs it. */
int hio_freestanding_cases(void)
{
	struct hio_decision d;
	unsigned long i;
	int failed = 0;

	for (i = 0; i < sizeof(hio_policy_cases) / sizeof(hio_policy_cases[0]); i++)
		failed += !hio_policy_case_holds(&hio_policy_cases[i], &d);
	return failed + hio_reuse_admission_holds(1);
}
