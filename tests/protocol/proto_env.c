/* SPDX-License-Identifier: Apache-2.0 */
/* Snapshots written as Envoy YAML, and the daemon serving them. */
#include "proto_util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "xdtest.h"

/* ---------------- snapshots ---------------- */

struct pu_item {
	enum pu_type type;
	char *name;
	int variant;
	char *ref;
	unsigned ttl_ms; /* "@ttl", 0: none */
	bool on_demand;  /* "@on_demand": true */
	char *as_name;   /* a variant (rule P1): its name, and */
	char *dpc;       /* its "@dynamic_parameter_constraints" */
	char *allow;     /* its one "@allow" glob, NULL: none (rule N2) */
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
	{
		pu_snap_put(c, s->items[i].type, s->items[i].name,
			    s->items[i].variant, s->items[i].ref);
		pu_snap_ttl(c, s->items[i].type, s->items[i].name,
			    s->items[i].ttl_ms);
		c->items[c->n - 1].on_demand = s->items[i].on_demand;
		if (s->items[i].as_name != NULL) {
			c->items[c->n - 1].as_name = strdup(s->items[i].as_name);
			c->items[c->n - 1].dpc = strdup(s->items[i].dpc);
		}
		if (s->items[i].allow != NULL)
			c->items[c->n - 1].allow = strdup(s->items[i].allow);
	}
	return c;
}

void pu_snap_free(struct pu_snap *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->items[i].name);
		free(s->items[i].ref);
		free(s->items[i].as_name);
		free(s->items[i].dpc);
		free(s->items[i].allow);
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
		it->ttl_ms = 0;
		it->on_demand = false;
		it->as_name = it->dpc = it->allow = NULL;
	} else {
		free(it->ref);
	}
	it->variant = variant;
	it->ref = ref != NULL ? strdup(ref) : NULL;
}

void pu_snap_variant(struct pu_snap *s, enum pu_type t, const char *name,
		     const char *tag, int variant, const char *ref,
		     const char *constraints)
{
	char *key;
	struct pu_item *it;

	ck_assert(asprintf(&key, "%s#%s", name, tag) > 0);
	pu_snap_put(s, t, key, variant, ref);
	it = find_item(s, t, key);
	free(it->as_name);
	free(it->dpc);
	it->as_name = strdup(name);
	it->dpc = strdup(constraints);
	free(key);
}

void pu_snap_ttl(struct pu_snap *s, enum pu_type t, const char *name,
		 unsigned ms)
{
	struct pu_item *it = find_item(s, t, name);

	ck_assert_msg(it != NULL, "no %s '%s' to give a TTL", pu_type_label(t),
		      name);
	it->ttl_ms = ms;
}

void pu_snap_on_demand(struct pu_snap *s, const char *name, bool on)
{
	struct pu_item *it = find_item(s, PU_VHDS, name);

	ck_assert_msg(it != NULL, "no virtual host '%s' to put on demand", name);
	it->on_demand = on;
}

void pu_snap_allow(struct pu_snap *s, enum pu_type t, const char *name,
		   const char *glob)
{
	struct pu_item *it = find_item(s, t, name);

	ck_assert_msg(it != NULL, "no %s '%s' to restrict", pu_type_label(t),
		      name);
	free(it->allow);
	it->allow = glob != NULL ? strdup(glob) : NULL;
}

void pu_snap_del(struct pu_snap *s, enum pu_type t, const char *name)
{
	struct pu_item *it = find_item(s, t, name);

	if (it == NULL)
		return;
	free(it->name);
	free(it->ref);
	free(it->as_name);
	free(it->dpc);
	free(it->allow);
	*it = s->items[--s->n];
}

bool pu_snap_has(const struct pu_snap *s, enum pu_type t, const char *name)
{
	return find_item(s, t, name) != NULL;
}

const char *pu_name(enum pu_type t, const char *base)
{
	char *n;

	if (t == PU_LEDS) { /* named by xdstp names only */
		ck_assert(asprintf(&n, PU_LEDS_PREFIX "%s", base) > 0);
		return n;
	}
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


/* The filter the extension configs of these tests configure. */
#define HEADER_MUTATION \
	"type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation"
/* A listener's `ref` that names an extension config (proto_util.h). */
#define ECDS_REF "ecds:"

static void item_yaml(struct xd_buf *b, const struct pu_item *it,
		      bool vhds_parent)
{
	int v = it->variant;

	switch (it->type) {
	case PU_SDS:
		/* served to every client: these tests run over plaintext,
		 * where a secret is otherwise not served (xdsd-snapshot(5)) */
		xd_buf_printf(b, "- name: \"%s\"\n  \"@allow\": [\"%s\"]\n  generic_secret: {secret: {inline_string: \"secret-%d\"}}\n",
		     it->name, it->allow != NULL ? it->allow : "@anyone", v);
		break;
	case PU_RTDS:
		xd_buf_printf(b, "- name: \"%s\"\n  layer: {key: \"value-%d\"}\n", it->name, v);
		break;
	case PU_CDS:
		xd_buf_printf(b, "- name: \"%s\"\n  connect_timeout: %ds\n", it->name, v + 1);
		if (it->ref != NULL)
			xd_buf_printf(b, "  type: EDS\n  eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}, service_name: \"%s\"}\n",
			     it->ref);
		else
			xd_buf_printf(b, "  type: STATIC\n");
		break;
	case PU_EDS:
		if (it->ref != NULL) /* a locality that takes them by LEDS */
			xd_buf_printf(b, "- cluster_name: \"%s\"\n  endpoints: [{locality: {zone: z%d}, leds_cluster_locality_config: {leds_config: {ads: {}, resource_api_version: V3}, leds_collection_name: \"%s\"}}]\n",
			     it->name, v, it->ref);
		else
			xd_buf_printf(b, "- cluster_name: \"%s\"\n  endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}}]}]\n",
			     it->name, 1000 + v);
		break;
	case PU_LEDS:
		xd_buf_printf(b, "- \"@name\": \"%s\"\n  endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}\n",
		     it->name, 2000 + v);
		break;
	case PU_ECDS:
		xd_buf_printf(b, "- name: \"%s\"\n  typed_config:\n    \"@type\": %s\n    mutations: {response_mutations: [{append: {header: {key: x-variant, value: \"v%d\"}}}]}\n",
		     it->name, HEADER_MUTATION, v);
		break;
	case PU_LDS:
		xd_buf_printf(b, "- name: \"%s\"\n  address: {socket_address: {address: 0.0.0.0, port_value: %d}}\n",
		     it->name, 10000 + v);
		if (it->ref == NULL)
			break;
		xd_buf_printf(b,
			"  filter_chains:\n"
			"  - filters:\n"
			"    - name: envoy.filters.network.http_connection_manager\n"
			"      typed_config:\n"
			"        \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
			"        stat_prefix: \"%s\"\n", it->name);
		if (strncmp(it->ref, ECDS_REF, strlen(ECDS_REF)) == 0)
			xd_buf_printf(b,
			     "        route_config: {virtual_hosts: [{name: all, domains: [\"*\"], routes: [{match: {prefix: /}, direct_response: {status: 200}}]}]}\n"
			     "        http_filters:\n"
			     "        - name: \"%s\"\n"
			     "          config_discovery: {config_source: {ads: {}, resource_api_version: V3}, type_urls: [%s]}\n",
			     it->ref + strlen(ECDS_REF), HEADER_MUTATION);
		else
			xd_buf_printf(b,
			     "        rds: {route_config_name: \"%s\", config_source: {ads: {}, resource_api_version: V3}}\n"
			     "        http_filters:\n", it->ref);
		xd_buf_printf(b,
			"        - name: envoy.filters.http.router\n"
			"          typed_config: {\"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}\n");
		break;
	case PU_RDS:
		xd_buf_printf(b, "- name: \"%s\"\n", it->name);
		if (vhds_parent)
			xd_buf_printf(b, "  vhds: {config_source: {ads: {}, resource_api_version: V3}}\n");
		if (it->ref != NULL)
			xd_buf_printf(b, "  virtual_hosts: [{name: \"vh-%d\", domains: [\"*\"], routes: [{match: {prefix: \"/\"}, route: {cluster: \"%s\"}}]}]\n",
			     v, it->ref);
		else
			xd_buf_printf(b, "  virtual_hosts: [{name: \"vh\", domains: [\"v%d.example\"]}]\n", v);
		break;
	case PU_SRDS:
		xd_buf_printf(b, "- name: \"%s\"\n  route_configuration_name: \"%s\"\n  key: {fragments: [{string_key: \"%s-%d\"}]}\n",
		     it->name, it->ref != NULL ? it->ref : "srds_rc", it->name, v);
		break;
	case PU_VHDS: {
		const char *slash = strchr(it->name, '/');

		ck_assert_msg(slash != NULL, "VHDS name '%s' needs a '/'", it->name);
		xd_buf_printf(b, "- name: \"%s\"\n  domains: [\"%s.example\"]\n", it->name, slash + 1);
		if (it->ref != NULL)
			xd_buf_printf(b, "  routes: [{match: {prefix: \"/v%d\"}, route: {cluster: \"%s\"}}]\n",
			     v, it->ref);
		else
			xd_buf_printf(b, "  routes: [{match: {prefix: \"/v%d\"}, direct_response: {status: 200}}]\n", v);
		break;
	}
	case PU_NTYPES:
		break;
	}
	if (it->ttl_ms > 0)
		xd_buf_printf(b, "  \"@ttl\": \"%u.%03us\"\n", it->ttl_ms / 1000,
			      it->ttl_ms % 1000);
	if (it->on_demand)
		xd_buf_printf(b, "  \"@on_demand\": true\n");
	if (it->allow != NULL && it->type != PU_SDS)
		xd_buf_printf(b, "  \"@allow\": [\"%s\"]\n", it->allow);
}

char *pu_snap_yaml(const struct pu_snap *s0)
{
	struct pu_snap *s = pu_snap_copy(s0);
	struct pu_strs vhds_parents = {0};
	struct xd_buf b = XD_BUF_INIT;

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
	xd_buf_printf(&b, "# written by the protocol tests\n");
	for (int t = 0; t < PU_NTYPES; t++) {
		bool any = false;

		for (size_t i = 0; i < s->n; i++) {
			if (s->items[i].type != (enum pu_type)t)
				continue;
			if (!any)
				xd_buf_printf(&b, "%s:\n", pu_type_section((enum pu_type)t));
			any = true;
			if (s->items[i].as_name != NULL) {
				struct pu_item v = s->items[i];

				v.name = v.as_name;
				item_yaml(&b, &v, false);
				xd_buf_printf(&b, "  \"@dynamic_parameter_constraints\": %s\n",
					      v.dpc);
				continue;
			}
			item_yaml(&b, &s->items[i],
				  t == PU_RDS && pu_strs_has(&vhds_parents, s->items[i].name));
		}
	}
	pu_strs_clear(&vhds_parents);
	pu_snap_free(s);
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
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

struct pu_env *pu_env_start_on(const char *dir, int port)
{
	struct pu_env *e = calloc(1, sizeof(*e));
	const char *schema = xdtest_env("XDSD_SCHEMA");
	char *cfg;
	int timeout = 10000;

	ck_assert(e != NULL);
	e->dir = strdup(dir);
	ck_assert(asprintf(&cfg,
			   "listen: 127.0.0.1:%d\nadmin_listen: 127.0.0.1:0\nsnapshots: %s\nschema: %s\nlog_level: debug\n",
			   port, dir, schema) > 0);
	if (pu_under_valgrind()) {
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

void pu_env_expect_log(struct pu_env *e, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	PU_ASSERT(xdt_daemon_wait_log(e->d, line, pu_wait_ms()),
		  "no '%s' in the log", line);
}

void pu_env_stop(struct pu_env *e)
{
	char *log, *vg;

	if (e->d == NULL || e->d->pid == 0)
		return;
	xdt_daemon_signal(e->d, SIGTERM);
	ck_assert_msg(xdt_daemon_wait(e->d, pu_under_valgrind() ? 120000 : 10000),
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

