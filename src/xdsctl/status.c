/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl status: GET /status.json, the daemon at a glance: version,
 * uptime, readiness, the xDS listener's TLS certificates and when they
 * expire, where the snapshots come from (from etcd: the revision held,
 * whether it is watched, the last failure), streams by sync state, each
 * snapshot, the reloads and the last one's errors, the last good
 * state's saves and a failed staged rollout. The exit status tells a
 * script or a health check what an operator reading the page would,
 * and whether a balancer should keep the replica: 0 serving and
 * healthy, XC_DEGRADED (1) serving while something needs an operator,
 * XC_NOT_SERVING (4) serving nothing (health()).
 *
 * With --fleet, every replica's /status.json (members.h), one row a
 * replica; the exit status the worst: XC_UNREACHABLE when one could
 * not be asked, else XC_NOT_SERVING when one serves nothing, else
 * XC_DEGRADED when one is degraded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/members.h"
#include "xdsctl/reload.h"
#include "xdsctl/show.h"

#define NCOLS 5

/* A member that may be a string or a list of them ("listen"). */
static char *text_or_list(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key), *e;
	struct xd_buf b = XD_BUF_INIT;
	size_t i;

	if (!json_is_array(v))
		return xc_safe_text(obj, key);
	json_array_foreach(v, i, e) {
		const char *s = json_is_string(e) ? json_string_value(e) : "?";
		char *safe = xc_safe(s, strlen(s));

		xd_buf_printf(&b, "%s%s", i ? ", " : "", safe);
		free(safe);
	}
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
}

/* "clusters 2, endpoints 1" */
static char *resources(json_t *snap)
{
	json_t *res = json_object_get(snap, "resources"), *n;
	struct xd_buf b = XD_BUF_INIT;
	const char *type;

	json_object_foreach(res, type, n)
		xd_buf_printf(&b, "%s%s %lld", b.len ? ", " : "", type,
			      xc_number(n));
	if (b.len == 0)
		xd_buf_printf(&b, "(empty)");
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
}

static void snapshots(json_t *list)
{
	static const char *const head[NCOLS] = {
		"SNAPSHOT", "VERSION", "SINCE", "SIZE", "RESOURCES",
	};
	struct xc_table *tab = xc_table_new(NCOLS, head);
	json_t *s;
	size_t i;

	json_array_foreach(list, i, s) {
		char b[3][64], size[32], *res = resources(s);
		const char *row[NCOLS];

		xd_text_bytes(size, sizeof(size), (double)xc_int(s, "bytes"));
		row[0] = xc_text(s, "key", b[0], sizeof(b[0]));
		row[1] = xc_text(s, "version", b[1], sizeof(b[1]));
		row[2] = xc_text(s, "since", b[2], sizeof(b[2]));
		row[3] = size;
		row[4] = res;
		xc_table_row(tab, row);
		free(res);
	}
	xc_table_print(tab, stdout);
	xc_table_free(tab);
}

/* "certificate /CN=x expires 2027-11-26T21:04:05Z (in 364d 23h)"; an
 * expired one says so first, and one due within the daemon's warning
 * time says "soon". */
static void print_certificate(const char *indent, const char *what,
			      json_t *c)
{
	char *subject = xc_safe_text(c, "subject"), *when = xc_safe_text(c, "not_after");
	long long left = xc_int(c, "expires_in_seconds");
	char age[32];

	xd_text_age(age, sizeof(age), left < 0 ? -left : left);
	if (left <= 0)
		printf("%s%s %s EXPIRED on %s (%s ago)\n", indent, what, subject,
		       when, age);
	else
		printf("%s%s %s expires %s (in %s%s)\n", indent, what, subject,
		       when, age, left <= 14 * 86400 ? ": soon" : "");
	free(subject);
	free(when);
}

/* The xDS listener's TLS: certificates and failed handshakes. */
static void print_tls(json_t *tls)
{
	if (!json_is_object(tls)) {
		printf("tls:       off (plaintext)\n");
		return;
	}
	printf("tls:       %s, %lld failed handshake%s\n",
	       json_is_true(json_object_get(tls, "mutual")) ?
		       "with client certificates (mTLS)" :
		       "server certificate only",
	       xc_int(tls, "handshake_failures"),
	       xc_int(tls, "handshake_failures") == 1 ? "" : "s");
	print_certificate("           ", "certificate",
			  json_object_get(tls, "certificate"));
	if (json_is_object(json_object_get(tls, "client_ca")))
		print_certificate("           ", "client CA",
				  json_object_get(tls, "client_ca"));
}

/* With state_dir: when the state was saved, and loudly whether it is
 * served instead of refused snapshots. */
static void print_last_good(json_t *lg)
{
	char *file, *saved;

	if (!json_is_object(lg))
		return;
	file = xc_safe_text(lg, "file");
	saved = xc_safe_text(lg, "saved_at");
	if (json_is_true(json_object_get(lg, "serving"))) {
		/* the errors themselves are the last reload's, below */
		printf("LAST GOOD: SERVING the state saved %s (%s): the snapshots were refused at start, %lld error%s\n",
		       saved, file, xc_int(lg, "error_count"),
		       xc_int(lg, "error_count") == 1 ? "" : "s");
	} else {
		printf("state:     %s, saved %s\n", file, saved);
	}
	if (json_is_true(json_object_get(lg, "save_failing"))) {
		char *err = xc_safe_text(lg, "last_save_error");
		char *at = xc_safe_text(lg, "last_save_error_at");

		/* what is on disk is older than what is served */
		printf("           SAVE FAILING: the last save, at %s, failed: %s\n",
		       at, err);
		free(err);
		free(at);
	}
	free(file);
	free(saved);
}

/* With rollout:, a failed one: rolled back, and what the files hold is
 * not served. */
static void print_rollout(json_t *ro)
{
	char *id, *ended, *reason;

	if (!json_is_string(json_object_get(ro, "state")) ||
	    strcmp(json_string_value(json_object_get(ro, "state")), "failed") != 0)
		return;
	id = xc_safe_text(ro, "id");
	ended = xc_safe_text(ro, "ended");
	reason = xc_safe_text(ro, "reason");
	printf("rollout:   %s FAILED at %s and was rolled back: %s\n", id, ended,
	       reason);
	free(id);
	free(ended);
	free(reason);
}

/* "           last error T: what" when `src` has one. */
static void print_last_error(json_t *src)
{
	char *err, *at;

	if (!json_is_string(json_object_get(src, "last_error")))
		return;
	err = xc_safe_text(src, "last_error");
	at = xc_safe_text(src, "last_error_at");
	printf("           last error %s: %s\n", at, err);
	free(err);
	free(at);
}

/* "source:    files /etc/xdsd/snapshots", or etcd's endpoint, prefix,
 * revision and health, and its last failure. */
static void print_source(json_t *src)
{
	char *kind = xc_safe_text(src, "kind");

	if (strcmp(kind, "etcd") != 0) {
		char *dir = xc_safe_text(src, "dir");

		printf("source:    %s %s\n", kind, dir);
		free(dir);
	} else {
		char *endpoint = xc_safe_text(src, "endpoint");
		char *prefix = xc_safe_text(src, "prefix");
		char *since = xc_safe_text(src, "since");
		bool healthy = json_is_true(json_object_get(src, "healthy"));

		printf("source:    etcd %s prefix %s, revision %lld, %s since %s, %lld reconnect%s\n",
		       endpoint, prefix, xc_int(src, "revision"),
		       healthy ? "watching" : "NOT WATCHING", since,
		       xc_int(src, "reconnects"),
		       xc_int(src, "reconnects") == 1 ? "" : "s");
		print_last_error(src);
		free(endpoint);
		free(prefix);
		free(since);
	}
	free(kind);
}

/* "sources:   files up, last good load T" for each source a reload
 * reads, and its last error. */
static void print_sources(json_t *arr)
{
	size_t i;
	json_t *src;

	json_array_foreach(arr, i, src) {
		char *name = xc_safe_text(src, "name");
		bool up = json_is_true(json_object_get(src, "up"));

		printf("%s %s %s", i == 0 ? "sources:  " : "          ", name,
		       up ? "up" : "DOWN");
		if (json_is_string(json_object_get(src, "last_good"))) {
			char *good = xc_safe_text(src, "last_good");

			printf(", last good %s", good);
			free(good);
		} else {
			printf(", never good");
		}
		printf("\n");
		print_last_error(src);
		free(name);
	}
}

static void print_status(const struct xc_opts *o, json_t *doc)
{
	json_t *clients = json_object_get(doc, "clients");
	json_t *reloads = json_object_get(doc, "reloads");
	json_t *history = json_object_get(reloads, "history");
	char *version = xc_safe_text(doc, "version");
	char *started = xc_safe_text(doc, "started");
	char *listen = text_or_list(doc, "listen");
	char uptime[32];

	xd_text_age(uptime, sizeof(uptime), xc_int(doc, "uptime_seconds"));
	printf("xdsd:      %s, %s\n", version,
	       json_is_true(json_object_get(doc, "ready")) ?
		       "ready" :
		       "not ready, serving nothing (starting or stopping)");
	printf("admin:     %s\n", o->admin);
	printf("listen:    %s\n", listen);
	/* absent from an older xdsd's answer: nothing to say */
	if (json_object_get(doc, "tls") != NULL)
		print_tls(json_object_get(doc, "tls"));
	/* absent from an older xdsd's answer too */
	if (json_is_object(json_object_get(doc, "source")))
		print_source(json_object_get(doc, "source"));
	/* absent from an older xdsd's answer too */
	if (json_is_array(json_object_get(doc, "sources")))
		print_sources(json_object_get(doc, "sources"));
	printf("started:   %s (up %s)\n", started, uptime);
	printf("streams:   %lld from %lld node%s: %lld synced, %lld pending, %lld nacked\n",
	       xc_int(doc, "streams"), xc_int(doc, "nodes"),
	       xc_int(doc, "nodes") == 1 ? "" : "s", xc_int(clients, "synced"),
	       xc_int(clients, "pending"), xc_int(clients, "nacked"));
	printf("reloads:   %lld ok, %lld failed\n", xc_int(reloads, "ok"),
	       xc_int(reloads, "failed"));
	print_last_good(json_object_get(doc, "last_good"));
	print_rollout(json_object_get(doc, "rollout"));
	printf("\n");
	if (json_array_size(json_object_get(doc, "snapshots")) > 0)
		snapshots(json_object_get(doc, "snapshots"));
	else
		printf("no snapshots\n");
	if (json_array_size(history) > 0) {
		printf("\nlast reload:\n");
		xc_reload_print(stdout, json_array_get(history, 0), "  ");
		xc_reload_print_diff(stdout, json_array_get(history, 0), "  ");
	}
	free(version);
	free(started);
	free(listen);
}

/*
 * XC_NOT_SERVING when xdsd is not ready: it serves nothing (starting,
 * before its first load, or stopping), which is also what its gRPC
 * health service says. Else XC_DEGRADED when it serves, but the newest
 * reload in its history was refused (it serves the previous
 * snapshots), it serves its last good state, the newest save of that
 * state failed (what a restart would fall back on is older than what
 * is served), its last staged rollout failed (rolled back: the files
 * hold what is not served) or its etcd source is not watching (it
 * serves what it read last, and misses what changes): a replica to
 * look at, not one to take out of a balancer, as every replica on one
 * etcd would be at once. Else XC_OK. Every reason is said on stderr. A
 * reload that succeeded since a refused one clears it, a save that
 * succeeds clears a failed one, a new rollout a failed one.
 */
static int health(const struct xc_opts *o, json_t *doc)
{
	json_t *last = json_array_get(
		json_object_get(json_object_get(doc, "reloads"), "history"), 0);
	json_t *src = json_object_get(doc, "source");
	json_t *ro = json_object_get(doc, "rollout");
	int rc = XC_OK;

	if (json_is_true(json_object_get(json_object_get(doc, "last_good"),
					 "serving"))) {
		xc_error("xdsd at %s serves its last good state: its snapshots were refused at start",
			 o->admin);
		rc = XC_DEGRADED;
	}
	if (last != NULL && !json_is_true(json_object_get(last, "ok"))) {
		xc_error("the last reload of xdsd at %s was refused; it serves the previous snapshots",
			 o->admin);
		rc = XC_DEGRADED;
	}
	if (json_is_true(json_object_get(json_object_get(doc, "last_good"),
					 "save_failing"))) {
		xc_error("xdsd at %s cannot save its last good state: the state on disk is older than what it serves",
			 o->admin);
		rc = XC_DEGRADED;
	}
	if (json_is_string(json_object_get(ro, "state")) &&
	    strcmp(json_string_value(json_object_get(ro, "state")), "failed") == 0) {
		xc_error("the last staged rollout of xdsd at %s failed and was rolled back",
			 o->admin);
		rc = XC_DEGRADED;
	}
	if (json_is_object(src) && json_is_false(json_object_get(src, "healthy"))) {
		xc_error("the etcd source of xdsd at %s is not watching; it serves what it read last",
			 o->admin);
		rc = XC_DEGRADED;
	}
	/* last: the reasons above say why, and this outranks them */
	if (!json_is_true(json_object_get(doc, "ready"))) {
		xc_error("xdsd at %s is not serving (starting, before its first load, or stopping)",
			 o->admin);
		rc = XC_NOT_SERVING;
	}
	return rc;
}

#define FLEET_NCOLS 9

/* The worse of two exit statuses of status --fleet. */
static int worse(int a, int b)
{
	static const int rank[] = {[XC_OK] = 0, [XC_DEGRADED] = 1,
				   [XC_USAGE] = 2, [XC_NOT_SERVING] = 3,
				   [XC_UNREACHABLE] = 4};

	return rank[b] > rank[a] ? b : a;
}

/* "failed 12:00:01Z" of the newest reload, or "-". */
static const char *last_reload(json_t *doc, char *buf, size_t cap)
{
	json_t *last = json_array_get(
		json_object_get(json_object_get(doc, "reloads"), "history"), 0);
	char at[64];

	if (!json_is_object(last))
		return "-";
	snprintf(buf, cap, "%s %s",
		 json_is_true(json_object_get(last, "ok")) ? "ok" : "REFUSED",
		 xc_text(last, "at", at, sizeof(at)));
	return buf;
}

/* status --fleet: a row per replica, its verdict beside it. */
static int fleet_status(const struct xc_opts *o)
{
	static const char *const head[FLEET_NCOLS] = {
		"REPLICA", "HEALTH", "VERSION", "SOURCE", "REVISION", "STREAMS",
		"NODES", "LAST RELOAD", "ROLLOUT",
	};
	static const char *const verdicts[] = {
		[XC_OK] = "serving", [XC_DEGRADED] = "DEGRADED",
		[XC_NOT_SERVING] = "NOT SERVING",
	};
	struct xc_members ms;
	struct xc_table *tab;
	int rc = xc_members_get(o, &ms), worst;

	if (rc != XC_OK)
		return rc;
	worst = xc_members_ask(&ms, "/status.json");
	if (o->json)
		xc_members_print_json(&ms, "status");
	tab = xc_table_new(FLEET_NCOLS, head);
	for (size_t i = 0; i < ms.n; i++) {
		struct xc_member *m = &ms.m[i];
		json_t *doc = m->a.json, *src = json_object_get(doc, "source");
		json_t *ro = json_object_get(doc, "rollout");
		char b[FLEET_NCOLS][64], *name, rollout[96];
		const char *row[FLEET_NCOLS];
		int v;

		if (!m->ok)
			continue;
		v = health(&m->o, doc);
		worst = worse(worst, v);
		name = xd_asprintf("%s%s", m->name, m->self ? " *" : "");
		if (json_is_true(json_object_get(ro, "configured")) && xc_int(ro, "id") > 0)
			snprintf(rollout, sizeof(rollout), "%lld %s", xc_int(ro, "id"),
				 xc_text(ro, "state", b[8], sizeof(b[8])));
		else
			snprintf(rollout, sizeof(rollout), "-");
		row[0] = name;
		row[1] = verdicts[v];
		row[2] = xc_text(doc, "version", b[2], sizeof(b[2]));
		row[3] = xc_text(src, "kind", b[3], sizeof(b[3]));
		row[4] = json_is_integer(json_object_get(src, "revision")) ?
				 xc_text(src, "revision", b[4], sizeof(b[4])) : "-";
		row[5] = xc_text(doc, "streams", b[5], sizeof(b[5]));
		row[6] = xc_text(doc, "nodes", b[6], sizeof(b[6]));
		row[7] = last_reload(doc, b[7], sizeof(b[7]));
		row[8] = rollout;
		xc_table_row(tab, row);
		free(name);
	}
	if (!o->json) {
		xc_table_print(tab, stdout);
		printf("%zu replica%s (* the one asked)\n", ms.n,
		       ms.n == 1 ? "" : "s");
	}
	xc_table_free(tab);
	xc_members_free(&ms);
	return worst;
}

int xc_status(const struct xc_opts *o, int argc, char **args)
{
	struct xc_answer a;
	int rc;

	(void)args;
	if (argc > 0)
		return xc_usage_error("status takes no arguments");
	if (o->fleet)
		return fleet_status(o);
	rc = xc_get_json(o, "/status.json", &a);
	if (rc != XC_OK)
		return rc;
	if (o->json)
		xc_print_raw(&a);
	else
		print_status(o, a.json);
	rc = health(o, a.json);
	xc_answer_free(&a);
	return rc;
}
