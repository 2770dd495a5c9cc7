/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types, combos and the parallel runner; strings, versions, protobuf
 * paths. Snapshots and the daemon are in proto_env.c, clients in
 * proto_client.c.
 */
#include "proto_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "xdtest.h"

/*
 * Test processes leak on purpose (short-lived forks; see the header):
 * in a sanitizer build, LeakSanitizer stays on for xdsd, which gets its
 * options from the environment, and off for the tests themselves.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* ---------------- types and methods ---------------- */

/* The tests' names of the types, in the order of rule A2: what xdsd
 * --print-types lists must be these, in this order. */
static const char *const labels[PU_NTYPES] = {
	[PU_SDS] = "SDS",   [PU_RTDS] = "RTDS", [PU_CDS] = "CDS",
	[PU_EDS] = "EDS",   [PU_LEDS] = "LEDS", [PU_ECDS] = "ECDS",
	[PU_LDS] = "LDS",
	[PU_RDS] = "RDS",   [PU_SRDS] = "SRDS", [PU_VHDS] = "VHDS",
};

/* The rest of what a type is, as xdsd's type table says it (xdsd
 * --print-types, xdsd(8)), read once. */
static struct {
	char *url, *section, *sotw, *delta;
	bool full_state, kept_while_subscribed;
} types[PU_NTYPES];
static bool types_read;

/* "-" is a column's "none". */
static char *column(const char *s)
{
	char *v;

	if (strcmp(s, "-") == 0)
		return NULL;
	v = strdup(s);
	XDT_REQUIRE(v != NULL, "out of memory");
	return v;
}

static void read_types(void)
{
	char cmd[4096], line[2048];
	size_t n = 0;
	FILE *f;

	if (types_read)
		return;
	snprintf(cmd, sizeof(cmd), "'%s' --print-types", xdtest_env("XDSD"));
	f = popen(cmd, "r");
	XDT_REQUIRE(f != NULL, "cannot run %s", cmd);
	while (fgets(line, sizeof(line), f) != NULL) {
		char label[32], url[512], key[64], name[64], sotw[512],
			delta[512], rest[64], role[64], flags[128];

		if (line[0] == '#')
			continue;
		XDT_REQUIRE(sscanf(line, "%31s %511s %63s %63s %511s %511s %63s %63s %127s",
				   label, url, key, name, sotw, delta, rest,
				   role, flags) == 9,
			    "xdsd --print-types: cannot read '%s'", line);
		XDT_REQUIRE(n < PU_NTYPES && strcmp(label, labels[n]) == 0,
			    "xdsd --print-types lists %s as type %zu, where enum pu_type has %s: the tests know every type, in push order",
			    label, n, n < PU_NTYPES ? labels[n] : "none");
		types[n].url = column(url);
		types[n].section = column(key);
		types[n].sotw = column(sotw);
		types[n].delta = column(delta);
		types[n].full_state = strstr(flags, "full-state") != NULL;
		types[n].kept_while_subscribed =
			strstr(flags, "kept-while-subscribed") != NULL;
		n++;
	}
	XDT_REQUIRE(pclose(f) == 0 && n == PU_NTYPES,
		    "%s: %zu types, the tests know %d", cmd, n, PU_NTYPES);
	types_read = true;
}

const char *pu_type_url(enum pu_type t)
{
	read_types();
	return types[t].url;
}

const char *pu_type_label(enum pu_type t)
{
	return labels[t];
}

const char *pu_type_section(enum pu_type t)
{
	read_types();
	return types[t].section;
}

int pu_type_of_url(const char *url)
{
	read_types();
	for (int t = 0; t < PU_NTYPES; t++)
		if (strcmp(types[t].url, url) == 0)
			return t;
	return -1;
}

bool pu_collection_url(const char *url)
{
	return strcmp(url, "type.googleapis.com/envoy.config.listener.v3.ListenerCollection") == 0 ||
	       strcmp(url, "type.googleapis.com/envoy.config.cluster.v3.ClusterCollection") == 0;
}

bool pu_full_state(enum pu_type t)
{
	read_types();
	return types[t].full_state;
}

unsigned pu_kept_while_subscribed(void)
{
	unsigned mask = 0;

	read_types();
	for (int t = 0; t < PU_NTYPES; t++)
		if (types[t].kept_while_subscribed)
			mask |= PU_BIT(t);
	return mask;
}

bool pu_has_sotw(enum pu_type t)
{
	read_types();
	return types[t].sotw != NULL;
}

const char *pu_method(bool delta, bool ads, enum pu_type t)
{
	if (ads)
		return delta ? XDC_DELTA_ADS : XDC_ADS;
	read_types();
	return delta ? types[t].delta : types[t].sotw;
}

const struct pu_combo *pu_combos(bool delta, unsigned mask, size_t *n)
{
	struct pu_combo *v = calloc(2 * PU_NTYPES, sizeof(*v));
	size_t k = 0;

	/* runs in main(), before any test: no Check asserts here */
	XDT_REQUIRE(v != NULL, "out of memory");
	for (int t = 0; t < PU_NTYPES; t++) {
		if (!(mask & PU_BIT(t)) || (!delta && !pu_has_sotw((enum pu_type)t)))
			continue;
		for (int ads = 0; ads < 2; ads++) {
			char *label;

			XDT_REQUIRE(asprintf(&label, "%s%s%s", delta ? "delta " : "",
					     ads ? "ADS " : "", labels[t]) > 0,
				    "out of memory");
			v[k++] = (struct pu_combo){label, delta, ads != 0,
						   (enum pu_type)t};
		}
	}
	*n = k;
	return v;
}

/* Every combo a test was registered for; the loop index points here. */
static const struct pu_combo *registry[4096];
static size_t nregistry;
static const struct pu_combo *current;

bool pu_under_valgrind(void)
{
	const char *v = getenv("PU_VALGRIND");

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

#define MAX_WORKERS 16
static int ntcases; /* TCases made, for round-robin worker tags */

static TCase *new_tcase(Suite *s, const char *rule)
{
	TCase *tc = tcase_create(rule);
	char tag[16];

	snprintf(tag, sizeof(tag), "w%d", ntcases++ % MAX_WORKERS);
	tcase_set_tags(tc, tag);
	tcase_set_timeout(tc, pu_under_valgrind() ? 600 : 60);
	suite_add_tcase(s, tc);
	return tc;
}

void pu_add_tests(Suite *s, const char *rule, const TTest *test,
		  const struct pu_combo *combos, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		TTest *t = malloc(sizeof(*t));
		char *name;

		XDT_REQUIRE(t != NULL && nregistry < 4096, "too many tests");
		XDT_REQUIRE(asprintf(&name, "%s [%s]", test->name,
				     combos[i].label) > 0, "asprintf");
		*t = *test;
		t->name = name;
		registry[nregistry] = &combos[i];
		_tcase_add_test(new_tcase(s, rule), t, 0, 0, (int)nregistry,
				(int)nregistry + 1);
		nregistry++;
	}
}

const struct pu_combo *pu_pick(const struct pu_combo *v, size_t n,
			       const char *label)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].label, label) == 0)
			return &v[i];
	xdtest_bail(__FILE__, __LINE__, "no combo '%s'", label);
}

void pu_add_test(Suite *s, const char *rule, const TTest *test)
{
	struct pu_combo *c = calloc(1, sizeof(*c));

	XDT_REQUIRE(c != NULL && nregistry < 4096, "too many tests");
	c->label = test->name;
	registry[nregistry] = c;
	_tcase_add_test(new_tcase(s, rule), test, 0, 0, (int)nregistry,
			(int)nregistry + 1);
	nregistry++;
}

const struct pu_combo *pu_combo(int i)
{
	ck_assert(i >= 0 && (size_t)i < nregistry);
	current = registry[i];
	return current;
}

const char *pu_label(void)
{
	return current != NULL ? current->label : "-";
}

/* ---------------- timing ---------------- */

static double scale(void)
{
	const char *s = getenv("PU_TIME_SCALE");
	double v = s != NULL ? atof(s) : 1.0;

	return v >= 1.0 ? v : 1.0;
}

int pu_wait_ms(void)
{
	return (int)(5000 * scale());
}

int pu_quiet_ms(void)
{
	const char *s = getenv("PU_QUIET_MS");
	int base = s != NULL && atoi(s) > 0 ? atoi(s) : 250;

	return (int)(base * (scale() > 1.0 ? 2 : 1));
}

/* ---------------- strings ---------------- */

void pu_strs_add(struct pu_strs *s, const char *x)
{
	if (pu_strs_has(s, x))
		return;
	s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
	ck_assert(s->v != NULL);
	s->v[s->n++] = strdup(x);
}

bool pu_strs_has(const struct pu_strs *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], x) == 0)
			return true;
	return false;
}

void pu_strs_del(struct pu_strs *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->v[i], x) == 0) {
			free(s->v[i]);
			s->v[i] = s->v[--s->n];
			return;
		}
	}
}

void pu_strs_clear(struct pu_strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *pu_join(char *const *v, size_t n)
{
	char **sorted = malloc((n + 1) * sizeof(*sorted));
	size_t len = 1;
	char *out;

	ck_assert(sorted != NULL);
	for (size_t i = 0; i < n; i++) {
		sorted[i] = v[i];
		len += strlen(v[i]) + 1;
	}
	qsort(sorted, n, sizeof(*sorted), by_str);
	out = malloc(len);
	ck_assert(out != NULL);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, sorted[i]);
	}
	free(sorted);
	return out;
}

char *pu_strs_join(const struct pu_strs *s)
{
	return pu_join(s->v, s->n);
}

/* ---------------- versions ---------------- */

static void hex16(char out[17], uint64_t v)
{
	snprintf(out, 17, "%016llx", (unsigned long long)v);
}

void pu_hash_hex(const void *data, size_t len, char out[17])
{
	hex16(out, XXH3_64bits(data, len));
}

struct pair {
	const char *name, *version;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->name, ((const struct pair *)b)->name);
}

void pu_table_version(const char *const *names, const char *const *versions,
		      size_t n, char out[17])
{
	struct pair *v = calloc(n + 1, sizeof(*v));
	XXH3_state_t *st = XXH3_createState();

	ck_assert(v != NULL && st != NULL);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct pair){names[i], versions[i]};
	qsort(v, n, sizeof(*v), by_name);
	XXH3_64bits_reset(st);
	for (size_t i = 0; i < n; i++) {
		XXH3_64bits_update(st, v[i].name, strlen(v[i].name) + 1);
		XXH3_64bits_update(st, v[i].version, 16);
	}
	hex16(out, XXH3_64bits_digest(st));
	XXH3_freeState(st);
	free(v);
}

bool pu_is_hex16(const char *s)
{
	if (s == NULL || strlen(s) != 16)
		return false;
	for (int i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* ---------------- protobuf ---------------- */

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*v = r;
			return true;
		}
	}
	return false;
}

void pu_pb_walk(const uint8_t *data, size_t len, const int *path,
		size_t depth, void (*fn)(const uint8_t *v, size_t n, void *arg),
		void *arg)
{
	const uint8_t *p = data, *end = data + len;

	while (p < end) {
		uint64_t tag, n;

		if (!varint(&p, end, &tag))
			return;
		switch (tag & 7) {
		case 0:
			if (!varint(&p, end, &n))
				return;
			break;
		case 1:
			p += 8;
			break;
		case 5:
			p += 4;
			break;
		case 2:
			if (!varint(&p, end, &n) || n > (uint64_t)(end - p))
				return;
			if ((int)(tag >> 3) == path[0]) {
				if (depth == 1)
					fn(p, (size_t)n, arg);
				else
					pu_pb_walk(p, (size_t)n, path + 1,
						   depth - 1, fn, arg);
			}
			p += n;
			break;
		default:
			return;
		}
	}
}

static void first_string(const uint8_t *v, size_t n, void *arg)
{
	char **out = arg;

	if (*out == NULL)
		*out = strndup((const char *)v, n);
}

char *pu_pb_string(const uint8_t *data, size_t len, const int *path,
		   size_t depth)
{
	char *out = NULL;

	pu_pb_walk(data, len, path, depth, first_string, &out);
	return out;
}

/* ---------------- running ---------------- */

/* A whole file, outside any test (no Check asserts); NULL if unreadable. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			XDT_REQUIRE(buf != NULL, "out of memory");
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* Kills daemons that tests started and did not stop (a test that failed
 * or timed out exits without cleaning up). */
static void kill_leftovers(void)
{
	char path[300];
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/daemons", xdtest_tmpdir());
	f = fopen(path, "r");
	while (f != NULL && fscanf(f, "%d", &pid) == 1) {
		char proc[64], *cmd;
		size_t n;

		snprintf(proc, sizeof(proc), "/proc/%d/cmdline", pid);
		cmd = slurp(proc, &n);
		if (cmd != NULL && n > 0 &&
		    (memmem(cmd, n, "xdsd", 4) != NULL ||
		     memmem(cmd, n, "valgrind", 8) != NULL))
			kill(pid, SIGKILL);
		free(cmd);
	}
	if (f != NULL)
		fclose(f);
}

static int jobs(void)
{
	const char *j = getenv("PU_JOBS");
	int n = j != NULL ? atoi(j) : pu_under_valgrind() ? 1 : 4;

	return n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : n;
}

int pu_run(Suite *s)
{
	int n = jobs(), total = 0, failed = 0;
	pid_t pids[MAX_WORKERS];
	char files[MAX_WORKERS][300];

	fflush(stdout);
	for (int w = 0; w < n; w++) {
		snprintf(files[w], sizeof(files[w]), "%s/tap.%d", xdtest_tmpdir(), w);
		pids[w] = fork();
		XDT_REQUIRE(pids[w] >= 0, "fork: %s", strerror(errno));
		if (pids[w] == 0) {
			SRunner *sr = srunner_create(s);
			char tags[MAX_WORKERS * 4 + 1] = "";

			/* worker w runs the TCases tagged w, w+n, w+2n... */
			for (int k = w; k < MAX_WORKERS; k += n) {
				char tag[16];

				snprintf(tag, sizeof(tag), "w%d ", k);
				strcat(tags, tag);
			}
			srunner_set_tap(sr, files[w]);
			srunner_run_tagged(sr, NULL, NULL, tags, NULL, CK_SILENT);
			srunner_free(sr);
			_exit(0);
		}
	}
	for (int w = 0; w < n; w++) {
		char *tap, *line, *save = NULL;
		int status = 0, planned = -1, ran = 0;

		XDT_REQUIRE(waitpid(pids[w], &status, 0) == pids[w], "waitpid");
		tap = slurp(files[w], NULL);
		for (line = tap ? strtok_r(tap, "\n", &save) : NULL; line != NULL;
		     line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, "ok ", 3) == 0 ||
			    strncmp(line, "not ok ", 7) == 0) {
				bool ok = line[0] == 'o';
				const char *rest = strstr(line, " - ");

				total++;
				ran++;
				failed += !ok;
				printf("%s %d%s\n", ok ? "ok" : "not ok", total,
				       rest != NULL ? rest : "");
			} else if (strncmp(line, "1..", 3) == 0) {
				planned = atoi(line + 3);
			} else {
				printf("# %s\n", line);
			}
		}
		/* a worker that died leaves tests unreported: a failure */
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || planned != ran) {
			total++;
			failed++;
			printf("not ok %d - worker %d ended (status %d) after %d of %d tests\n",
			       total, w, status, ran, planned);
		}
		free(tap);
	}
	printf("1..%d\n", total);
	fflush(stdout);
	kill_leftovers();
	return failed == 0 ? 0 : 1;
}
