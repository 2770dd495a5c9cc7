/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checked contracts (util/xalloc.h, util/loop_thread.h): a call off the
 * loop thread and a reference dropped below zero abort the process, and
 * the message on stderr says what it concerns.
 *
 * Each abort happens in a process of its own: Check's fork mode for the
 * signal, and a child forked here, its stderr in a file, for the text.
 *
 * The name sets' module is included whole, as a unit test of its
 * insides: a set's count at zero while the set is still in memory
 * cannot be reached through its functions (the last drop frees it), so
 * the test puts the count there itself to see the check that catches
 * one drop too many.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/cache.h"
#include "protocol/derived.h"
#include "protocol/nameset.c"
#include "snapshot/table.h"
#include "util/loop_thread.h"
#include "xdtest.h"

/* ---------------- the loop thread ---------------- */

static void *get_from_another_thread(void *arg)
{
	/* the cache is the loop's (cache.h): this must abort */
	xd_cache_get(arg, "web");
	return NULL;
}

/* The test's thread becomes the loop thread by its first call into the
 * cache; a second thread then asks the cache. */
static void cache_from_two_threads(void)
{
	struct xd_cache *c = xd_cache_new();
	pthread_t th;

	ck_assert_ptr_null(xd_cache_get(c, "web"));
	pthread_create(&th, NULL, get_from_another_thread, c);
	pthread_join(th, NULL);
	xd_cache_free(c);
}

START_TEST(off_loop_call_aborts)
{
	cache_from_two_threads();
	ck_abort_msg("a call off the loop thread went through");
}
END_TEST

/* Runs `fn(arg)` on a second thread, once the test's thread is the
 * loop thread. */
static void on_another_thread(void *(*fn)(void *), void *arg)
{
	pthread_t th;

	ck_assert(xd_loop_thread_claim());
	pthread_create(&th, NULL, fn, arg);
	pthread_join(th, NULL);
}

static void *intern_from_another_thread(void *arg)
{
	struct xd_name n = {"a", 1};

	(void)arg;
	/* the intern table is the loop's (nameset.h): this must abort */
	xd_nameset_unref(xd_nameset_intern(&n, 1));
	return NULL;
}

START_TEST(nameset_off_loop_aborts)
{
	on_another_thread(intern_from_another_thread, NULL);
	ck_abort_msg("a name set interned off the loop thread went through");
}
END_TEST

static void *view_from_another_thread(void *arg)
{
	/* the memos and the registry of views are the loop's (derived.h):
	 * this must abort, whether or not the table restricts anything */
	xd_table_unref(xd_derived_view(arg, "spiffe://x"));
	return NULL;
}

START_TEST(derived_off_loop_aborts)
{
	struct xd_table *t = xd_table_empty(XD_CLUSTER);

	on_another_thread(view_from_another_thread, t);
	xd_table_unref(t);
	ck_abort_msg("a table's view made off the loop thread went through");
}
END_TEST

static void *refs_from_another_thread(void *arg)
{
	struct xd_table *t = arg;

	/* tables are shared with the loader's threads: any thread */
	xd_table_unref(xd_table_ref(t));
	return NULL;
}

START_TEST(loop_calls_and_any_thread_calls_pass)
{
	struct xd_cache *c = xd_cache_new();
	struct xd_table *t = xd_table_empty(XD_CLUSTER);
	pthread_t th;

	/* the first caller is the loop thread, and stays it */
	ck_assert(xd_loop_thread_claim());
	ck_assert_ptr_null(xd_cache_get(c, "web"));
	ck_assert(xd_loop_thread_claim());
	pthread_create(&th, NULL, refs_from_another_thread, t);
	pthread_join(th, NULL);
	xd_table_unref(t);
	xd_cache_free(c);
}
END_TEST

/* A thread that is not the first to claim is refused. */
static void *claim(void *arg)
{
	*(bool *)arg = xd_loop_thread_claim();
	return NULL;
}

START_TEST(second_thread_cannot_claim)
{
	pthread_t th;
	bool other = true;

	ck_assert(xd_loop_thread_claim());
	pthread_create(&th, NULL, claim, &other);
	pthread_join(th, NULL);
	ck_assert(!other);
}
END_TEST

/* ---------------- reference counts ---------------- */

/*
 * A table whose attachment drops a reference to the table itself when
 * the table goes: when it runs, the count is 0 already, and the table
 * still in memory (it is freed after), so the drop is an underflow on
 * a live object, not a use after free.
 */
static void unref_own_table(void *p)
{
	xd_table_unref(p);
}

static void drop_a_table_twice(void)
{
	struct xd_table *t = xd_table_empty(XD_CLUSTER);
	struct xd_table_attachment *a = xd_table_attachment(t);

	a->p = t;
	a->free_fn = unref_own_table;
	xd_table_unref(t);
}

START_TEST(table_unref_below_zero_aborts)
{
	drop_a_table_twice();
	ck_abort_msg("a table's reference dropped below zero went through");
}
END_TEST

/* A reference taken to a table that is going: the same count, read
 * the other way. */
static void ref_own_table(void *p)
{
	xd_table_ref(p);
}

START_TEST(table_ref_at_zero_aborts)
{
	struct xd_table *t = xd_table_empty(XD_ROUTE);
	struct xd_table_attachment *a = xd_table_attachment(t);

	a->p = t;
	a->free_fn = ref_own_table;
	xd_table_unref(t);
	ck_abort_msg("a reference to a table being freed went through");
}
END_TEST

/* One drop of a set too many, the set still in memory: what the last
 * of two drops of one reference would meet if the first had not freed
 * it. */
static void drop_a_nameset_twice(void)
{
	struct xd_name n = {"a", 1};
	struct xd_nameset *s = xd_nameset_intern(&n, 1);

	s->refs = 0;
	xd_nameset_unref(s);
}

START_TEST(nameset_unref_below_zero_aborts)
{
	drop_a_nameset_twice();
	ck_abort_msg("a name set's reference dropped below zero went through");
}
END_TEST

START_TEST(xd_unref_counts_down)
{
	unsigned refs = 2;

	ck_assert(!XD_UNREF(refs));
	ck_assert_uint_eq(refs, 1);
	ck_assert(XD_UNREF(refs));
	ck_assert_uint_eq(refs, 0);
}
END_TEST

/* ---------------- who it concerns ---------------- */

/* Runs `fn` in a child whose stderr goes to a file, checks that the
 * child aborted, and returns what it wrote there (malloc'd). */
static char *abort_message(void (*fn)(void))
{
	char *path = xd_asprintf("%s/stderr-XXXXXX", xdtest_tmpdir());
	int fd = mkstemp(path);
	pid_t pid;
	char *text;
	int status;

	ck_assert_int_ge(fd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd, STDERR_FILENO);
		fn();
		_exit(0);
	}
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "the child ended with status %#x", status);
	text = xdtest_read_file(path, NULL);
	ck_assert_ptr_nonnull(text);
	unlink(path);
	free(path);
	return text;
}

START_TEST(messages_name_what_they_concern)
{
	char *text = abort_message(cache_from_two_threads);

	/* the function called, and where */
	ck_assert_msg(strstr(text, "internal error: called off the loop thread (xd_cache_get)") != NULL &&
		      strstr(text, "src/cache/cache.c:") != NULL,
		      "stderr: %s", text);
	free(text);

	text = abort_message(drop_a_table_twice);
	/* the table: its id, type and version (an empty table's) */
	ck_assert_msg(strstr(text, "src/snapshot/table.c:") != NULL &&
		      strstr(text, "reference dropped below zero: table ") != NULL &&
		      strstr(text, " (type.googleapis.com/envoy.config.cluster.v3.Cluster, version ") != NULL,
		      "stderr: %s", text);
	free(text);

	text = abort_message(drop_a_nameset_twice);
	/* the set: its id and size */
	ck_assert_msg(strstr(text, "src/protocol/nameset.c:") != NULL &&
		      strstr(text, "reference dropped below zero: name set ") != NULL &&
		      strstr(text, " (1 names)") != NULL,
		      "stderr: %s", text);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("contracts");
	TCase *aborts = tcase_create("aborts");
	TCase *passes = tcase_create("passes");

	/* the aborts must happen in a process of each test's own, whatever
	 * CK_FORK the caller set */
	setenv("CK_FORK", "yes", 1);
	xdtest_tmpdir();
	tcase_add_test_raise_signal(aborts, off_loop_call_aborts, SIGABRT);
	tcase_add_test_raise_signal(aborts, table_unref_below_zero_aborts,
				    SIGABRT);
	tcase_add_test_raise_signal(aborts, table_ref_at_zero_aborts, SIGABRT);
	tcase_add_test_raise_signal(aborts, nameset_off_loop_aborts, SIGABRT);
	tcase_add_test_raise_signal(aborts, derived_off_loop_aborts, SIGABRT);
	tcase_add_test_raise_signal(aborts, nameset_unref_below_zero_aborts,
				    SIGABRT);
	tcase_add_test(passes, loop_calls_and_any_thread_calls_pass);
	tcase_add_test(passes, second_thread_cannot_claim);
	tcase_add_test(passes, xd_unref_counts_down);
	tcase_add_test(passes, messages_name_what_they_concern);
	suite_add_tcase(s, aborts);
	suite_add_tcase(s, passes);
	return xdtest_run(s);
}
