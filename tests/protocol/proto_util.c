#include "proto_util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "envoy/config/core/v3/base.pb-c.h"
#include "google/rpc/status.pb-c.h"
#include "xdtest.h"

#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"

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

static const struct {
	const char *url, *label, *service, *sotw, *delta;
} types[PU_NTYPES] = {
	[PU_SDS] = {"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
		    "SDS", "/envoy.service.secret.v3.SecretDiscoveryService/",
		    "StreamSecrets", "DeltaSecrets"},
	[PU_RTDS] = {"type.googleapis.com/envoy.service.runtime.v3.Runtime",
		     "RTDS", "/envoy.service.runtime.v3.RuntimeDiscoveryService/",
		     "StreamRuntime", "DeltaRuntime"},
	[PU_CDS] = {"type.googleapis.com/envoy.config.cluster.v3.Cluster",
		    "CDS", "/envoy.service.cluster.v3.ClusterDiscoveryService/",
		    "StreamClusters", "DeltaClusters"},
	[PU_EDS] = {"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
		    "EDS", "/envoy.service.endpoint.v3.EndpointDiscoveryService/",
		    "StreamEndpoints", "DeltaEndpoints"},
	[PU_LDS] = {"type.googleapis.com/envoy.config.listener.v3.Listener",
		    "LDS", "/envoy.service.listener.v3.ListenerDiscoveryService/",
		    "StreamListeners", "DeltaListeners"},
	[PU_RDS] = {"type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
		    "RDS", "/envoy.service.route.v3.RouteDiscoveryService/",
		    "StreamRoutes", "DeltaRoutes"},
	/* The service is "ScopedRoutes..." in Envoy's srds.proto. */
	[PU_SRDS] = {"type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration",
		     "SRDS", "/envoy.service.route.v3.ScopedRoutesDiscoveryService/",
		     "StreamScopedRoutes", "DeltaScopedRoutes"},
	[PU_VHDS] = {"type.googleapis.com/envoy.config.route.v3.VirtualHost",
		     "VHDS", "/envoy.service.route.v3.VirtualHostDiscoveryService/",
		     NULL, "DeltaVirtualHosts"},
};

const char *pu_type_url(enum pu_type t)
{
	return types[t].url;
}

const char *pu_type_label(enum pu_type t)
{
	return types[t].label;
}

int pu_type_of_url(const char *url)
{
	for (int t = 0; t < PU_NTYPES; t++)
		if (strcmp(types[t].url, url) == 0)
			return t;
	return -1;
}

bool pu_full_state(enum pu_type t)
{
	return t == PU_LDS || t == PU_CDS;
}

const char *pu_method(bool delta, bool ads, enum pu_type t)
{
	static char paths[PU_NTYPES][2][128];
	const char *m = delta ? types[t].delta : types[t].sotw;

	if (ads)
		return delta ? XDC_DELTA_ADS : XDC_ADS;
	if (m == NULL)
		return NULL;
	snprintf(paths[t][delta], sizeof(paths[t][delta]), "%s%s",
		 types[t].service, m);
	return paths[t][delta];
}

const struct pu_combo *pu_combos(bool delta, unsigned mask, size_t *n)
{
	struct pu_combo *v = calloc(2 * PU_NTYPES, sizeof(*v));
	size_t k = 0;

	/* runs in main(), before any test: no Check asserts here */
	XDT_REQUIRE(v != NULL, "out of memory");
	for (int t = 0; t < PU_NTYPES; t++) {
		if (!(mask & PU_BIT(t)) || (!delta && t == PU_VHDS))
			continue;
		for (int ads = 0; ads < 2; ads++) {
			char *label;

			XDT_REQUIRE(asprintf(&label, "%s%s%s", delta ? "delta " : "",
					     ads ? "ADS " : "", types[t].label) > 0,
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

static bool under_valgrind(void);

#define MAX_WORKERS 16
static int ntcases; /* TCases made, for round-robin worker tags */

static TCase *new_tcase(Suite *s, const char *rule)
{
	TCase *tc = tcase_create(rule);
	char tag[16];

	snprintf(tag, sizeof(tag), "w%d", ntcases++ % MAX_WORKERS);
	tcase_set_tags(tc, tag);
	tcase_set_timeout(tc, under_valgrind() ? 600 : 60);
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

/* Sorted, comma-separated copy of `n` strings. */
static char *join(char *const *v, size_t n)
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
	return join(s->v, s->n);
}

/* ---------------- snapshots ---------------- */

struct pu_item {
	enum pu_type type;
	char *name;
	int variant;
	char *ref;
};

struct pu_snap {
	struct pu_item *items;
	size_t n;
};

struct pu_snap *pu_snap_new(void)
{
	struct pu_snap *s = calloc(1, sizeof(*s));

	ck_assert(s != NULL);
	return s;
}

struct pu_snap *pu_snap_copy(const struct pu_snap *s)
{
	struct pu_snap *c = pu_snap_new();

	for (size_t i = 0; i < s->n; i++)
		pu_snap_put(c, s->items[i].type, s->items[i].name,
			    s->items[i].variant, s->items[i].ref);
	return c;
}

void pu_snap_free(struct pu_snap *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->items[i].name);
		free(s->items[i].ref);
	}
	free(s->items);
	free(s);
}

static struct pu_item *find_item(const struct pu_snap *s, enum pu_type t,
				 const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].type == t && strcmp(s->items[i].name, name) == 0)
			return &s->items[i];
	return NULL;
}

void pu_snap_put(struct pu_snap *s, enum pu_type t, const char *name,
		 int variant, const char *ref)
{
	struct pu_item *it = find_item(s, t, name);

	if (it == NULL) {
		s->items = realloc(s->items, (s->n + 1) * sizeof(*s->items));
		ck_assert(s->items != NULL);
		it = &s->items[s->n++];
		it->type = t;
		it->name = strdup(name);
	} else {
		free(it->ref);
	}
	it->variant = variant;
	it->ref = ref != NULL ? strdup(ref) : NULL;
}

void pu_snap_del(struct pu_snap *s, enum pu_type t, const char *name)
{
	struct pu_item *it = find_item(s, t, name);

	if (it == NULL)
		return;
	free(it->name);
	free(it->ref);
	*it = s->items[--s->n];
}

bool pu_snap_has(const struct pu_snap *s, enum pu_type t, const char *name)
{
	return find_item(s, t, name) != NULL;
}

const char *pu_name(enum pu_type t, const char *base)
{
	char *n;

	if (t != PU_VHDS)
		return base;
	ck_assert(asprintf(&n, "vhds_rc/%s", base) > 0);
	return n; /* test processes are short-lived */
}

struct pu_snap *pu_snap_of(enum pu_type t, ...)
{
	struct pu_snap *s = pu_snap_new();
	va_list ap;

	va_start(ap, t);
	for (const char *b; (b = va_arg(ap, const char *)) != NULL;)
		pu_snap_put(s, t, pu_name(t, b), 1, NULL);
	va_end(ap);
	return s;
}

char *pu_list(enum pu_type t, ...)
{
	struct pu_strs v = {0};
	va_list ap;
	char *out;

	va_start(ap, t);
	for (const char *b; (b = va_arg(ap, const char *)) != NULL;)
		pu_strs_add(&v, pu_name(t, b));
	va_end(ap);
	out = pu_strs_join(&v);
	pu_strs_clear(&v);
	return out;
}

struct ybuf {
	char *p;
	size_t len, cap;
};

static void yput(struct ybuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void yput(struct ybuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		ck_assert(n >= 0);
		if ((size_t)n < b->cap - b->len)
			break;
		b->cap = (b->cap + (size_t)n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		ck_assert(b->p != NULL);
	}
	b->len += (size_t)n;
}

static const char *const sections[PU_NTYPES] = {
	[PU_SDS] = "secrets",        [PU_RTDS] = "runtimes",
	[PU_CDS] = "clusters",       [PU_EDS] = "endpoints",
	[PU_LDS] = "listeners",      [PU_RDS] = "routes",
	[PU_SRDS] = "scoped_routes", [PU_VHDS] = "virtual_hosts",
};

static void item_yaml(struct ybuf *b, const struct pu_item *it,
		      bool vhds_parent)
{
	int v = it->variant;

	switch (it->type) {
	case PU_SDS:
		yput(b, "- name: \"%s\"\n  generic_secret: {secret: {inline_string: \"secret-%d\"}}\n",
		     it->name, v);
		break;
	case PU_RTDS:
		yput(b, "- name: \"%s\"\n  layer: {key: \"value-%d\"}\n", it->name, v);
		break;
	case PU_CDS:
		yput(b, "- name: \"%s\"\n  connect_timeout: %ds\n", it->name, v + 1);
		if (it->ref != NULL)
			yput(b, "  type: EDS\n  eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}, service_name: \"%s\"}\n",
			     it->ref);
		else
			yput(b, "  type: STATIC\n");
		break;
	case PU_EDS:
		yput(b, "- cluster_name: \"%s\"\n  endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}}]}]\n",
		     it->name, 1000 + v);
		break;
	case PU_LDS:
		yput(b, "- name: \"%s\"\n  address: {socket_address: {address: 0.0.0.0, port_value: %d}}\n",
		     it->name, 10000 + v);
		if (it->ref != NULL)
			yput(b,
			     "  filter_chains:\n"
			     "  - filters:\n"
			     "    - name: envoy.filters.network.http_connection_manager\n"
			     "      typed_config:\n"
			     "        \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
			     "        stat_prefix: \"%s\"\n"
			     "        rds: {route_config_name: \"%s\", config_source: {ads: {}, resource_api_version: V3}}\n"
			     "        http_filters:\n"
			     "        - name: envoy.filters.http.router\n"
			     "          typed_config: {\"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}\n",
			     it->name, it->ref);
		break;
	case PU_RDS:
		yput(b, "- name: \"%s\"\n", it->name);
		if (vhds_parent)
			yput(b, "  vhds: {config_source: {ads: {}, resource_api_version: V3}}\n");
		if (it->ref != NULL)
			yput(b, "  virtual_hosts: [{name: \"vh-%d\", domains: [\"*\"], routes: [{match: {prefix: \"/\"}, route: {cluster: \"%s\"}}]}]\n",
			     v, it->ref);
		else
			yput(b, "  virtual_hosts: [{name: \"vh\", domains: [\"v%d.example\"]}]\n", v);
		break;
	case PU_SRDS:
		yput(b, "- name: \"%s\"\n  route_configuration_name: \"%s\"\n  key: {fragments: [{string_key: \"%s-%d\"}]}\n",
		     it->name, it->ref != NULL ? it->ref : "srds_rc", it->name, v);
		break;
	case PU_VHDS: {
		const char *slash = strchr(it->name, '/');

		ck_assert_msg(slash != NULL, "VHDS name '%s' needs a '/'", it->name);
		yput(b, "- name: \"%s\"\n  domains: [\"%s.example\"]\n", it->name, slash + 1);
		if (it->ref != NULL)
			yput(b, "  routes: [{match: {prefix: \"/v%d\"}, route: {cluster: \"%s\"}}]\n",
			     v, it->ref);
		else
			yput(b, "  routes: [{match: {prefix: \"/v%d\"}, direct_response: {status: 200}}]\n", v);
		break;
	}
	case PU_NTYPES:
		break;
	}
}

char *pu_snap_yaml(const struct pu_snap *s0)
{
	struct pu_snap *s = pu_snap_copy(s0);
	struct pu_strs vhds_parents = {0};
	struct ybuf b = {0};

	/* the route configurations scoped routes and virtual hosts need */
	for (size_t i = 0; i < s0->n; i++) {
		const struct pu_item *it = &s0->items[i];

		if (it->type == PU_SRDS) {
			const char *rc = it->ref != NULL ? it->ref : "srds_rc";

			if (!pu_snap_has(s, PU_RDS, rc))
				pu_snap_put(s, PU_RDS, rc, 0, NULL);
		} else if (it->type == PU_VHDS) {
			char *rc = strndup(it->name, strcspn(it->name, "/"));

			pu_strs_add(&vhds_parents, rc);
			if (!pu_snap_has(s, PU_RDS, rc))
				pu_snap_put(s, PU_RDS, rc, 0, NULL);
			free(rc);
		}
	}
	yput(&b, "# written by the protocol tests\n");
	for (int t = 0; t < PU_NTYPES; t++) {
		bool any = false;

		for (size_t i = 0; i < s->n; i++) {
			if (s->items[i].type != (enum pu_type)t)
				continue;
			if (!any)
				yput(&b, "%s:\n", sections[t]);
			any = true;
			item_yaml(&b, &s->items[i],
				  t == PU_RDS && pu_strs_has(&vhds_parents, s->items[i].name));
		}
	}
	pu_strs_clear(&vhds_parents);
	pu_snap_free(s);
	return b.p;
}

/* ---------------- the daemon ---------------- */

/* Daemons started by tests, for pu_run to kill if a test died first. */
static void note_pid(pid_t pid)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/daemons", xdtest_tmpdir());
	f = fopen(path, "a");
	if (f != NULL) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
}

static bool under_valgrind(void)
{
	const char *v = getenv("PU_VALGRIND");

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

struct pu_env *pu_env_start_on(const char *dir, int port)
{
	struct pu_env *e = calloc(1, sizeof(*e));
	const char *schema = xdtest_env("XDSD_SCHEMA");
	char *cfg;
	int timeout = 10000;

	ck_assert(e != NULL);
	e->dir = strdup(dir);
	ck_assert(asprintf(&cfg,
			   "listen: 127.0.0.1:%d\nsnapshots: %s\nschema: %s\nlog_level: debug\n",
			   port, dir, schema) > 0);
	if (under_valgrind()) {
		char *wrapper;

		ck_assert(asprintf(&e->vglog, "%s/valgrind.%d.%d.log", dir,
				   (int)getpid(), port) > 0);
		ck_assert(asprintf(&wrapper,
				   "%s --quiet --leak-check=full --show-leak-kinds=definite,indirect "
				   "--errors-for-leak-kinds=definite,indirect --error-exitcode=99 "
				   "--log-file=%s",
				   xdtest_env("VALGRIND"), e->vglog) > 0);
		setenv("XDSD_WRAPPER", wrapper, 1);
		free(wrapper);
		timeout = 120000;
	}
	e->d = xdt_daemon_start(cfg, NULL, timeout);
	unsetenv("XDSD_WRAPPER");
	note_pid(e->d->pid);
	e->port = e->d->port;
	free(cfg);
	return e;
}

struct pu_env *pu_env_start(const struct pu_snap *def)
{
	char tmpl[300];
	struct pu_env *e;
	char *yaml = pu_snap_yaml(def);
	char *path;

	snprintf(tmpl, sizeof(tmpl), "%s/snaps.XXXXXX", xdtest_tmpdir());
	ck_assert(mkdtemp(tmpl) != NULL);
	path = xdtest_write_file(tmpl, "default.yaml", yaml);
	free(path);
	free(yaml);
	e = pu_env_start_on(tmpl, 0);
	return e;
}

void pu_env_write(struct pu_env *e, const char *key, const struct pu_snap *s)
{
	char *tmp, *path, name[128];

	snprintf(name, sizeof(name), ".%s.yaml.tmp", key);
	ck_assert(asprintf(&path, "%s/%s.yaml", e->dir, key) > 0);
	if (s == NULL) {
		ck_assert(unlink(path) == 0 || errno == ENOENT);
	} else {
		char *yaml = pu_snap_yaml(s);

		tmp = xdtest_write_file(e->dir, name, yaml);
		ck_assert(rename(tmp, path) == 0);
		free(tmp);
		free(yaml);
	}
	free(path);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; p != NULL && (p = strstr(p, needle)) != NULL;
	     p += strlen(needle))
		n++;
	return n;
}

/* The lines xdsd logs for each request it handles (session.c's
 * on_request and stream.c's xd_stream_finish). */
static int handled(const char *log)
{
	return count(log, ": ACK of ") + count(log, ": NACK of ") +
	       count(log, " request with stale nonce") +
	       count(log, " request: ") + count(log, ": ending with status ");
}

void pu_env_sync(struct pu_env *e)
{
	long long deadline = xdtest_now_ms() + pu_wait_ms();

	for (;;) {
		char *log = pu_env_log(e);
		int n = handled(log);

		free(log);
		if (n >= e->sent)
			return;
		PU_ASSERT(xdtest_now_ms() < deadline,
			  "xdsd logged %d of the %d requests sent", n, e->sent);
		xdtest_sleep_ms(2);
	}
}

void pu_env_reload(struct pu_env *e)
{
	long long deadline;
	char *log;
	int failed;

	pu_env_sync(e);
	deadline = xdtest_now_ms() + pu_wait_ms() * 2;
	log = pu_env_log(e);
	failed = count(log, "reload failed");
	free(log);
	xdt_daemon_signal(e->d, SIGHUP);
	for (;;) {
		log = pu_env_log(e);
		if (count(log, "info: reloaded ") > e->reloads)
			break;
		ck_assert_msg(count(log, "reload failed") == failed,
			      "[%s] the reload failed:\n%s", pu_label(),
			      strlen(log) > 3000 ? log + strlen(log) - 3000 : log);
		ck_assert_msg(xdtest_now_ms() < deadline,
			      "[%s] no 'reloaded' in the log", pu_label());
		free(log);
		xdtest_sleep_ms(5);
	}
	e->reloads = count(log, "info: reloaded ");
	free(log);
}

void pu_env_set(struct pu_env *e, const struct pu_snap *def)
{
	pu_env_write(e, "default", def);
	pu_env_reload(e);
}

char *pu_env_log(struct pu_env *e)
{
	char *log = xdt_daemon_log(e->d);

	return log != NULL ? log : strdup("");
}

bool pu_env_log_has(struct pu_env *e, const char *needle)
{
	char *log = pu_env_log(e);
	bool has = strstr(log, needle) != NULL;

	free(log);
	return has;
}

void pu_env_stop(struct pu_env *e)
{
	char *log, *vg;

	if (e->d == NULL || e->d->pid == 0)
		return;
	xdt_daemon_signal(e->d, SIGTERM);
	ck_assert_msg(xdt_daemon_wait(e->d, under_valgrind() ? 120000 : 10000),
		      "xdsd did not stop");
	log = pu_env_log(e);
	vg = e->vglog != NULL ? xdtest_read_file(e->vglog, NULL) : NULL;
	ck_assert_msg(e->d->exit_status == 0,
		      "xdsd exit status %d\nvalgrind:\n%s\nlog tail:\n%s",
		      e->d->exit_status, vg ? vg : "(none)",
		      strlen(log) > 3000 ? log + strlen(log) - 3000 : log);
	ck_assert_msg(vg == NULL || vg[0] == '\0', "valgrind:\n%s", vg);
	free(vg);
	free(log);
}

void pu_env_free(struct pu_env *e)
{
	if (e == NULL)
		return;
	if (e->d != NULL && e->d->pid > 0)
		pu_env_stop(e);
	xdt_daemon_free(e->d);
	free(e->dir);
	free(e->vglog);
	free(e);
}

/* ---------------- clients ---------------- */

struct tstate {
	char *version; /* of the last response received */
	char *nonce;
	char *acked;   /* the last version ACKed (SotW NACKs repeat it) */
	struct pu_strs names; /* SotW: the last list sent */
};

struct pu_client {
	struct pu_env *env;
	struct xdc_conn *conn;
	struct xdc_stream *st;
	bool delta, ads;
	char *node_id, *node_cluster, *feature;
	bool node_sent;
	struct tstate ts[PU_NTYPES];
};

struct pu_client *pu_open_method(struct pu_env *e, const char *method,
				 bool delta)
{
	struct pu_client *c = calloc(1, sizeof(*c));

	ck_assert(c != NULL);
	c->env = e;
	c->delta = delta;
	c->ads = strcmp(method, XDC_ADS) == 0 || strcmp(method, XDC_DELTA_ADS) == 0;
	c->conn = xdc_connect(e->d->target);
	c->st = xdc_open(c->conn, method);
	pu_client_node(c, "node-1", "test", NULL);
	return c;
}

struct pu_client *pu_open(struct pu_env *e, bool delta, bool ads,
			  enum pu_type t)
{
	const char *m = pu_method(delta, ads, t);

	ck_assert_msg(m != NULL, "no method for %s", pu_type_label(t));
	return pu_open_method(e, m, delta);
}

struct pu_client *pu_connect(struct pu_env *e, const struct pu_combo *c)
{
	return pu_open(e, c->delta, c->ads, c->type);
}

void pu_client_free(struct pu_client *c)
{
	if (c == NULL)
		return;
	/* requests on their way count for pu_env_sync: let them land
	 * before the stream is cancelled */
	if (c->env->d->pid > 0 && !xdc_status(c->st, NULL, NULL, 0))
		pu_env_sync(c->env);
	xdc_stream_free(c->st);
	xdc_conn_free(c->conn);
	for (int t = 0; t < PU_NTYPES; t++) {
		free(c->ts[t].version);
		free(c->ts[t].nonce);
		free(c->ts[t].acked);
		pu_strs_clear(&c->ts[t].names);
	}
	free(c->node_id);
	free(c->node_cluster);
	free(c->feature);
	free(c);
}

void pu_client_node(struct pu_client *c, const char *id, const char *cluster,
		    const char *feature)
{
	free(c->node_id);
	free(c->node_cluster);
	free(c->feature);
	c->node_id = strdup(id);
	c->node_cluster = strdup(cluster);
	c->feature = feature != NULL ? strdup(feature) : NULL;
}

struct xdc_stream *pu_stream(struct pu_client *c)
{
	return c->st;
}

static void set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = v != NULL ? strdup(v) : NULL;
}

void pu_send(struct pu_client *c, const struct pu_req *r)
{
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;
	char *feature[1];
	bool with_node = r->node == PU_NODE_ALWAYS ||
			 (r->node == PU_NODE_AUTO && !c->node_sent);
	const char *url = r->no_type_url ? "" :
			  r->type_url != NULL ? r->type_url : pu_type_url(r->type);

	node.id = (char *)(r->node_id != NULL ? r->node_id : c->node_id);
	node.cluster = c->node_cluster;
	if (c->feature != NULL) {
		feature[0] = c->feature;
		node.n_client_features = 1;
		node.client_features = feature;
	}
	err.code = 3; /* INVALID_ARGUMENT, as Envoy sends */
	err.message = (char *)r->error;
	if (c->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
			*ents = NULL, **eptr = NULL;

		req.node = with_node ? &node : NULL;
		req.type_url = (char *)url;
		req.n_resource_names_subscribe = r->nnames;
		req.resource_names_subscribe = (char **)r->names;
		req.n_resource_names_unsubscribe = r->nunsub;
		req.resource_names_unsubscribe = (char **)r->unsub;
		req.response_nonce = (char *)(r->nonce ? r->nonce : "");
		req.error_detail = r->error != NULL ? &err : NULL;
		if (r->ninit > 0) {
			ents = calloc(r->ninit, sizeof(*ents));
			eptr = calloc(r->ninit, sizeof(*eptr));
			ck_assert(ents != NULL && eptr != NULL);
			for (size_t i = 0; i < r->ninit; i++) {
				Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
					init = ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INITIAL_RESOURCE_VERSIONS_ENTRY__INIT;

				ents[i] = init;
				ents[i].key = (char *)r->init_names[i];
				ents[i].value = (char *)r->init_versions[i];
				eptr[i] = &ents[i];
			}
			req.n_initial_resource_versions = r->ninit;
			req.initial_resource_versions = eptr;
		}
		xdc_send_delta(c->st, &req, pu_wait_ms());
		free(ents);
		free(eptr);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		req.version_info = (char *)(r->version ? r->version : "");
		req.node = with_node ? &node : NULL;
		req.n_resource_names = r->nnames;
		req.resource_names = (char **)r->names;
		req.type_url = (char *)url;
		req.response_nonce = (char *)(r->nonce ? r->nonce : "");
		req.error_detail = r->error != NULL ? &err : NULL;
		xdc_send_sotw(c->st, &req, pu_wait_ms());
		if (r->type_url == NULL && !r->no_type_url) {
			struct tstate *ts = &c->ts[r->type];
			struct pu_strs names = {0};

			/* r->names may be ts->names itself (ACKs); kept as
			 * sent (a list of 100,000 names must stay cheap) */
			names.v = malloc((r->nnames + 1) * sizeof(*names.v));
			ck_assert(names.v != NULL);
			for (size_t i = 0; i < r->nnames; i++)
				names.v[names.n++] = strdup(r->names[i]);
			pu_strs_clear(&ts->names);
			ts->names = names;
			if (r->error == NULL && r->nonce != NULL && r->version != NULL)
				set_str(&ts->acked, r->version);
		}
	}
	if (with_node)
		c->node_sent = true;
	/* xdsd logs a line for it unless it is of a type it does not serve
	 * on an aggregated stream (answered without a line per request) */
	if (!(c->ads && r->type_url != NULL && pu_type_of_url(r->type_url) < 0))
		c->env->sent++;
}

static size_t collect(va_list ap, const char ***out)
{
	const char **v = NULL;
	size_t n = 0;

	for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
		v = realloc(v, (n + 1) * sizeof(*v));
		ck_assert(v != NULL);
		v[n++] = s;
	}
	*out = v;
	return n;
}

void pu_subv(struct pu_client *c, enum pu_type t, const char *const *names,
	     size_t n)
{
	struct pu_req r = {.type = t, .names = names, .nnames = n};

	if (!c->delta) {
		r.version = c->ts[t].version;
		r.nonce = c->ts[t].nonce;
	}
	pu_send(c, &r);
}

void pu_sub(struct pu_client *c, enum pu_type t, ...)
{
	const char **v;
	size_t n;
	va_list ap;

	va_start(ap, t);
	n = collect(ap, &v);
	va_end(ap);
	pu_subv(c, t, v, n);
	free(v);
}

void pu_unsub(struct pu_client *c, enum pu_type t, ...)
{
	struct pu_req r = {.type = t};
	const char **v;
	va_list ap;

	ck_assert(c->delta);
	va_start(ap, t);
	r.nunsub = collect(ap, &v);
	va_end(ap);
	r.unsub = v;
	pu_send(c, &r);
	free(v);
}

void pu_ack(struct pu_client *c, const struct pu_resp *r)
{
	struct pu_req q = {.nonce = r->nonce};

	if (r->type >= 0) {
		q.type = (enum pu_type)r->type;
	} else {
		q.type = PU_CDS;
		q.type_url = r->type_url;
	}
	if (!c->delta) {
		q.version = r->version;
		if (r->type >= 0) {
			q.names = (const char *const *)c->ts[r->type].names.v;
			q.nnames = c->ts[r->type].names.n;
		}
	}
	pu_send(c, &q);
}

void pu_nack(struct pu_client *c, const struct pu_resp *r, const char *msg)
{
	struct pu_req q = {.nonce = r->nonce, .error = msg};

	ck_assert(r->type >= 0);
	q.type = (enum pu_type)r->type;
	if (!c->delta) {
		q.version = c->ts[r->type].acked ? c->ts[r->type].acked : "";
		q.names = (const char *const *)c->ts[r->type].names.v;
		q.nnames = c->ts[r->type].names.n;
	}
	pu_send(c, &q);
}

/* ---------------- responses ---------------- */

static char *status_text(struct pu_client *c)
{
	grpc_status_code code;
	char *details = NULL, *out;

	if (!xdc_status(c->st, &code, &details, 1000))
		return strdup("no status");
	ck_assert(asprintf(&out, "status %d '%s'", (int)code,
			   details ? details : "") > 0);
	free(details);
	return out;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
	uint8_t *d = malloc(n + 1);

	ck_assert(d != NULL);
	if (n > 0)
		memcpy(d, p, n);
	d[n] = 0;
	return d;
}

static void fill_from_resource(struct pu_res *x,
			       const Envoy__Service__Discovery__V3__Resource *r)
{
	x->name = strdup(r->name);
	x->version = strdup(r->version);
	x->naliases = r->n_aliases;
	x->aliases = calloc(r->n_aliases + 1, sizeof(char *));
	ck_assert(x->aliases != NULL);
	for (size_t k = 0; k < r->n_aliases; k++)
		x->aliases[k] = strdup(r->aliases[k]);
	if (r->resource != NULL) {
		x->has_body = true;
		x->url = strdup(r->resource->type_url);
		x->body = dup_bytes(r->resource->value.data, r->resource->value.len);
		x->len = r->resource->value.len;
	}
}

static struct pu_resp *decode(struct pu_client *c, const uint8_t *data,
			      size_t len)
{
	struct pu_resp *out = calloc(1, sizeof(*out));
	static const int name_path[] = {1};

	ck_assert(out != NULL);
	out->delta = c->delta;
	out->raw_len = len;
	if (c->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
			envoy__service__discovery__v3__delta_discovery_response__unpack(NULL, len, data);

		PU_ASSERT(r != NULL, "a DeltaDiscoveryResponse that does not decode");
		out->type_url = strdup(r->type_url);
		out->version = strdup(r->system_version_info);
		out->nonce = strdup(r->nonce);
		out->nres = r->n_resources;
		out->res = calloc(r->n_resources + 1, sizeof(*out->res));
		ck_assert(out->res != NULL);
		for (size_t i = 0; i < r->n_resources; i++)
			fill_from_resource(&out->res[i], r->resources[i]);
		out->nremoved = r->n_removed_resources;
		out->removed = calloc(r->n_removed_resources + 1, sizeof(char *));
		ck_assert(out->removed != NULL);
		for (size_t i = 0; i < r->n_removed_resources; i++)
			out->removed[i] = strdup(r->removed_resources[i]);
		envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			envoy__service__discovery__v3__discovery_response__unpack(NULL, len, data);

		PU_ASSERT(r != NULL, "a DiscoveryResponse that does not decode");
		out->type_url = strdup(r->type_url);
		out->version = strdup(r->version_info);
		out->nonce = strdup(r->nonce);
		out->nres = r->n_resources;
		out->res = calloc(r->n_resources + 1, sizeof(*out->res));
		out->removed = calloc(1, sizeof(char *));
		ck_assert(out->res != NULL && out->removed != NULL);
		for (size_t i = 0; i < r->n_resources; i++) {
			Google__Protobuf__Any *a = r->resources[i];
			struct pu_res *x = &out->res[i];

			if (strcmp(a->type_url, RESOURCE_URL) == 0) {
				Envoy__Service__Discovery__V3__Resource *w =
					envoy__service__discovery__v3__resource__unpack(
						NULL, a->value.len, a->value.data);

				PU_ASSERT(w != NULL, "a wrapped Resource that does not decode");
				fill_from_resource(x, w);
				x->wrapped = true;
				envoy__service__discovery__v3__resource__free_unpacked(w, NULL);
			} else {
				x->has_body = true;
				x->url = strdup(a->type_url);
				x->body = dup_bytes(a->value.data, a->value.len);
				x->len = a->value.len;
				x->name = pu_pb_string(x->body, x->len, name_path, 1);
				if (x->name == NULL)
					x->name = strdup("");
				x->aliases = calloc(1, sizeof(char *));
			}
		}
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	}
	out->type = pu_type_of_url(out->type_url);
	if (out->type >= 0) {
		set_str(&c->ts[out->type].version, out->version);
		set_str(&c->ts[out->type].nonce, out->nonce);
	}
	return out;
}

struct pu_resp *pu_recv(struct pu_client *c, int timeout_ms)
{
	uint8_t *data;
	size_t len;
	int rc = xdc_recv(c->st, &data, &len, timeout_ms);
	struct pu_resp *r;

	if (rc < 0)
		return NULL;
	if (rc == 0)
		ck_abort_msg("[%s] the stream ended: %s", pu_label(), status_text(c));
	r = decode(c, data, len);
	free(data);
	return r;
}

static char *summary(const struct pu_resp *r)
{
	char *s;

	ck_assert(asprintf(&s, "%s version '%s' nonce '%s' resources [%s] missing [%s] removed [%s]",
			   r->type >= 0 ? pu_type_label((enum pu_type)r->type) : r->type_url,
			   r->version, r->nonce, pu_names(r), pu_missing(r),
			   pu_removed(r)) > 0);
	return s;
}

/* The end of the daemon's log, for failure messages. */
static const char *log_tail(struct pu_client *c)
{
	char *log = pu_env_log(c->env);
	size_t n = strlen(log);

	return n > 2000 ? log + n - 2000 : log;
}

struct pu_resp *pu_expect(struct pu_client *c, enum pu_type t)
{
	struct pu_resp *r = pu_recv(c, pu_wait_ms());

	PU_ASSERT(r != NULL, "no %s response within %d ms; xdsd's log ends:\n%s",
		  pu_type_label(t), pu_wait_ms(), log_tail(c));
	PU_ASSERT(r->type == (int)t, "expected a %s response, got %s",
		  pu_type_label(t), summary(r));
	return r;
}

void pu_expect_none(struct pu_client *c, int ms)
{
	struct pu_resp *r;

	pu_env_sync(c->env);
	r = pu_recv(c, ms > 0 ? ms : pu_quiet_ms());

	PU_ASSERT(r == NULL, "expected no response, got %s", summary(r));
}

void pu_expect_status(struct pu_client *c, int code, const char *needle)
{
	long long deadline = xdtest_now_ms() + pu_wait_ms();
	grpc_status_code got;
	char *details = NULL;

	for (;;) {
		uint8_t *data;
		size_t len;

		if (xdc_status(c->st, &got, &details, 50))
			break;
		PU_ASSERT(xdtest_now_ms() < deadline,
			  "the stream did not end within %d ms", pu_wait_ms());
		/* drain messages sent before the status */
		if (xdc_recv(c->st, &data, &len, 50) == 1)
			free(data);
	}
	PU_ASSERT((int)got == code, "status %d '%s', expected %d", (int)got,
		  details ? details : "", code);
	if (needle != NULL)
		PU_ASSERT(details != NULL && strstr(details, needle) != NULL,
			  "status message '%s' lacks '%s'", details ? details : "",
			  needle);
	free(details);
}

void pu_resp_free(struct pu_resp *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nres; i++) {
		struct pu_res *x = &r->res[i];

		free(x->name);
		free(x->version);
		free(x->body);
		free(x->url);
		for (size_t k = 0; k < x->naliases; k++)
			free(x->aliases[k]);
		free(x->aliases);
	}
	for (size_t i = 0; i < r->nremoved; i++)
		free(r->removed[i]);
	free(r->removed);
	free(r->res);
	free(r->type_url);
	free(r->version);
	free(r->nonce);
	free(r);
}

static char *names_where(const struct pu_resp *r, bool body)
{
	char **v = calloc(r->nres + 1, sizeof(*v));
	size_t n = 0;
	char *out;

	ck_assert(v != NULL);
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].has_body == body)
			v[n++] = r->res[i].name;
	out = join(v, n);
	free(v);
	return out;
}

char *pu_names(const struct pu_resp *r)
{
	return names_where(r, true);
}

char *pu_missing(const struct pu_resp *r)
{
	return names_where(r, false);
}

char *pu_removed(const struct pu_resp *r)
{
	return join(r->removed, r->nremoved);
}

const struct pu_res *pu_find(const struct pu_resp *r, const char *name)
{
	for (size_t i = 0; i < r->nres; i++)
		if (strcmp(r->res[i].name, name) == 0)
			return &r->res[i];
	return NULL;
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
	int n = j != NULL ? atoi(j) : under_valgrind() ? 1 : 4;

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
				char tag[8];

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
