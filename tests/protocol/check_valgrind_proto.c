/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A representative subset of the protocol tests (SotW, delta, ADS and
 * bad wire input) with xdsd under valgrind: each test's daemon must exit
 * cleanly with no leak and no memory error (pu_env_stop reads valgrind's
 * log). Built from the same test sources with PU_NO_MAIN; the plain
 * (non-sanitizer) build runs it.
 */
#include <stdlib.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

int main(void)
{
	Suite *s = suite_create("protocol under valgrind");

	xdtest_tmpdir();
	xdtest_env("VALGRIND");
	setenv("PU_VALGRIND", "1", 1);
	/* valgrind slows xdsd some 20-50 times */
	setenv("PU_TIME_SCALE", "10", 0);
	setenv("PU_JOBS", "2", 0);
	pu_register_sotw(s, true);
	pu_register_delta(s, true);
	pu_register_ads(s, true);
	pu_register_wire(s, true);
	pu_register_xdstp(s, true);
	pu_register_dyn(s, true);
	pu_register_collections(s, true);
	pu_register_ecds(s, true);
	pu_register_leds(s, true);
	pu_register_errors(s, true);
	return pu_run(s);
}
