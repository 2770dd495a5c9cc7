/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The last good state's file (reload/laststate.h): what is written is
 * read back byte for byte, and a file that is cut, damaged or crafted
 * (a right checksum over counts and lengths that lie) is refused with
 * why, never read past its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "reload/laststate.h"
#include "xdtest.h"

#define AT_MS 1700000000123LL

static struct xd_snapfile files_a[] = {
	{.path = "/etc/xdsd/snapshots/default.yaml", .text = "clusters: []\n", .len = 13},
};
static struct xd_snapfile files_b[] = {
	{.path = "/xdsd/snapshots/edge/1.json", .text = "{\"a\":\0 1}", .len = 9, .json = true},
	{.path = "/xdsd/snapshots/edge/2.yaml", .text = "", .len = 0},
};
static const struct xd_snapkey keys[] = {
	{.key = "default", .files = files_a, .nfiles = 1},
	{.key = "edge", .files = files_b, .nfiles = 2},
};

static char *path_in_tmp(const char *name)
{
	char *p;

	ck_assert(asprintf(&p, "%s/%s", xdtest_tmpdir(), name) > 0);
	return p;
}

/* The good file's bytes. */
static unsigned char *good(size_t *len)
{
	char *path = path_in_tmp("good.state"), err[512];
	size_t bytes = 0;
	unsigned char *data;

	ck_assert_msg(xd_laststate_write(path, keys, 2, AT_MS, err, sizeof(err), &bytes) == 0,
		      "%s", err);
	data = (unsigned char *)xdtest_read_file(path, len);
	ck_assert_uint_eq(*len, bytes);
	free(path);
	return data;
}

static void put_le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Writes `data` with its body length and checksum made right again,
 * reads it, and returns the first error (malloc'd), or NULL. */
static char *read_back(unsigned char *data, size_t len)
{
	char *path = path_in_tmp("crafted.state"), *why = NULL;
	struct xd_snapkey *got;
	struct xd_diag diag = XD_DIAG_INIT;
	size_t n;
	int64_t at;
	FILE *f;

	put_le(data + 24, len - 40, 8);
	put_le(data + len - 8, XXH3_64bits(data, len - 8), 8);
	f = fopen(path, "w");
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	if (xd_laststate_read(path, &got, &n, &at, &diag) == 0) {
		xd_snapdir_free(got, n);
	} else {
		ck_assert_ptr_null(got);
		ck_assert(diag.count > 0);
		why = strdup(diag.msgs[0]);
	}
	xd_diag_clear(&diag);
	free(path);
	return why;
}

START_TEST(round_trip)
{
	char *path = path_in_tmp("good.state");
	struct xd_snapkey *got;
	struct xd_diag diag = XD_DIAG_INIT;
	size_t n, len;
	int64_t at = 0;
	unsigned char *data = good(&len);

	ck_assert_int_eq(xd_laststate_read(path, &got, &n, &at, &diag), 0);
	ck_assert_int_eq(at, AT_MS);
	ck_assert_uint_eq(n, 2);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(got[i].key, keys[i].key);
		ck_assert_uint_eq(got[i].nfiles, keys[i].nfiles);
		for (size_t f = 0; f < got[i].nfiles; f++) {
			const struct xd_snapfile *a = &keys[i].files[f], *b = &got[i].files[f];

			ck_assert_str_eq(b->path, a->path);
			ck_assert_uint_eq(b->len, a->len);
			ck_assert(memcmp(b->text, a->text, a->len) == 0);
			ck_assert_int_eq(b->text[b->len], '\0');
			ck_assert_int_eq(b->json, a->json);
		}
	}
	xd_snapdir_free(got, n);
	free(data);
	free(path);

	path = path_in_tmp("none.state");
	ck_assert_int_eq(xd_laststate_read(path, &got, &n, &at, &diag), 1);
	ck_assert_uint_eq(xd_diag_total(&diag), 0);
	free(path);
}
END_TEST

/* Every length short of the whole file is refused. */
START_TEST(every_cut_refused)
{
	size_t len;
	unsigned char *data = good(&len);
	char *path = path_in_tmp("cut.state");

	for (size_t cut = 0; cut < len; cut++) {
		struct xd_snapkey *got;
		struct xd_diag diag = XD_DIAG_INIT;
		size_t n;
		int64_t at;
		FILE *f = fopen(path, "w");

		ck_assert_uint_eq(fwrite(data, 1, cut, f), cut);
		ck_assert_int_eq(fclose(f), 0);
		ck_assert_int_eq(xd_laststate_read(path, &got, &n, &at, &diag), -1);
		ck_assert_uint_eq(xd_diag_total(&diag), 1);
		xd_diag_clear(&diag);
	}
	free(path);
	free(data);
}
END_TEST

/* Right checksums over fields that lie: each refused, saying which. */
START_TEST(crafted_fields_refused)
{
	/* offsets in the good file: key 0's length at 32, its 7 bytes,
	 * its file count at 43, its file's name length at 47, the
	 * name's 32 bytes, its kind at 83 and its text's length at 84 */
	static const struct {
		size_t off;
		uint64_t value;
		unsigned width;
		const char *why;
	} cases[] = {
		{12, 0, 4, "0 keys in"},
		{12, 3, 4, "runs past the end"},
		{32, 1u << 30, 4, "a key of 1073741824 bytes at byte 36 is too long"},
		{32, 0, 4, "key 0 ('') has "},
		{43, 0xffffffffu, 4, "key 0 ('default') has 4294967295 files"},
		{47, 60000, 4, "a file name of 60000 bytes at byte 51 runs past the end"},
		{51 + 32, 2, 1, "is of unknown kind 2"},
		{51 + 33, 1ull << 40, 8, "a file's text of 1099511627776 bytes at byte 92 is too long"},
	};
	size_t len;
	unsigned char *data = good(&len), *copy = malloc(len + 16);
	char *why;

	ck_assert_ptr_null(read_back(data, len));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(copy, data, len);
		put_le(copy + cases[i].off, cases[i].value, cases[i].width);
		why = read_back(copy, len);
		ck_assert_msg(why != NULL && strstr(why, cases[i].why) != NULL,
			      "case %zu: '%s' is not '%s'", i, why ? why : "(read)",
			      cases[i].why);
		free(why);
	}
	/* more after the last file */
	memcpy(copy, data, len - 8);
	memset(copy + len - 8, 'x', 16);
	why = read_back(copy, len + 8);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "8 bytes follow the last file"));
	free(why);
	free(copy);
	free(data);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("laststate");
	TCase *tc = tcase_create("file");

	xdtest_tmpdir();
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, every_cut_refused);
	tcase_add_test(tc, crafted_fields_refused);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
