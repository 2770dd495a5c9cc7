/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STATUS= line xdsd gives systemd (daemon/notify.c): figures with
 * thousands separators, how the last reload went and how long ago, and
 * never more than one line whatever a reload's error holds.
 */
#include <string.h>

#include "daemon/notify.h"
#include "xdtest.h"

#define NOW 1700000000000LL

static const char *fmt(size_t snaps, size_t streams, bool reloading,
		       const struct xd_reload_record *rec)
{
	static char out[512];

	xd_notify_format(out, sizeof(out), snaps, streams, reloading, rec, NOW);
	return out;
}

START_TEST(counts_with_separators)
{
	ck_assert_str_eq(fmt(3, 1234, false, NULL),
			 "serving 3 snapshots to 1,234 streams");
	ck_assert_str_eq(fmt(1, 1, false, NULL),
			 "serving 1 snapshot to 1 stream");
	ck_assert_str_eq(fmt(0, 1234567, false, NULL),
			 "serving 0 snapshots to 1,234,567 streams");
	ck_assert_str_eq(fmt(1000, 999, false, NULL),
			 "serving 1,000 snapshots to 999 streams");
}
END_TEST

START_TEST(last_reload_and_its_age)
{
	struct xd_reload_record rec = {.at_ms = NOW - 12400, .trigger = "SIGHUP",
				       .ok = true};

	ck_assert_str_eq(fmt(3, 0, false, &rec),
			 "serving 3 snapshots to 0 streams; last reload ok 12 s ago");
	rec.at_ms = NOW - 5 * 60 * 1000;
	ck_assert_str_eq(fmt(3, 0, false, &rec),
			 "serving 3 snapshots to 0 streams; last reload ok 5 min ago");
	rec.at_ms = NOW - 3 * 3600 * 1000;
	ck_assert_str_eq(fmt(3, 0, false, &rec),
			 "serving 3 snapshots to 0 streams; last reload ok 3 h ago");
	rec.at_ms = NOW - 3LL * 86400 * 1000;
	ck_assert_str_eq(fmt(3, 0, false, &rec),
			 "serving 3 snapshots to 0 streams; last reload ok 3 d ago");
	rec.trigger = "start-up";
	rec.at_ms = NOW;
	ck_assert_str_eq(fmt(3, 0, false, &rec),
			 "serving 3 snapshots to 0 streams; loaded at start-up 0 s ago");
	ck_assert_str_eq(fmt(3, 0, true, &rec),
			 "serving 3 snapshots to 0 streams; reloading");
}
END_TEST

START_TEST(failed_reload_shows_first_error_on_one_line)
{
	char *errors[] = {"a.yaml:3:5: bad\nSTATUS=forged", "b.yaml:1:1: x"};
	struct xd_reload_record rec = {.at_ms = NOW - 5000, .trigger = "watch",
				       .ok = false, .nerrors = 2,
				       .errors = errors, .nkept = 2};

	ck_assert_str_eq(fmt(2, 10, false, &rec),
			 "serving 2 snapshots to 10 streams; last reload FAILED 5 s ago: a.yaml:3:5: bad\\x0aSTATUS=forged");
	rec.nkept = 0;
	ck_assert_str_eq(fmt(2, 10, false, &rec),
			 "serving 2 snapshots to 10 streams; last reload FAILED 5 s ago");
}
END_TEST

START_TEST(long_error_cut)
{
	static char long_err[2000];
	char *errors[] = {long_err};
	struct xd_reload_record rec = {.at_ms = NOW, .trigger = "SIGHUP",
				       .errors = errors, .nkept = 1};
	const char *s;

	memset(long_err, 'e', sizeof(long_err) - 1);
	s = fmt(1, 0, false, &rec);
	ck_assert_uint_lt(strlen(s), 300);
	ck_assert_ptr_nonnull(strstr(s, "FAILED 0 s ago: eeee"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("notify");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, counts_with_separators);
	tcase_add_test(tc, last_reload_and_its_age);
	tcase_add_test(tc, failed_reload_shows_first_error_on_one_line);
	tcase_add_test(tc, long_error_cut);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
