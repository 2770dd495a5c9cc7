/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/status_page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin/clients.h"
#include "admin/status.h"
#include "transport/handshakes.h"
#include "util/clock.h"
#include "util/html.h"
#include "util/jsonw.h"
#include "util/text.h"
#include "util/xalloc.h"

/* ---------------- formatting ---------------- */

/* The page's own look: no external stylesheet, no web fonts. */
static const char css[] =
	":root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#fff;"
	"--head:#f6f8fa;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e}"
	"*{box-sizing:border-box}"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	"color:var(--fg);background:var(--bg)}"
	"header{padding:14px 24px;border-bottom:1px solid var(--line);background:var(--head)}"
	"h1{font-size:20px;margin:0 12px 0 0;display:inline-block}"
	"h1 small{font-weight:normal;color:var(--muted);font-size:14px}"
	"h2{font-size:16px;margin:22px 0 8px}"
	"h2 small{font-weight:normal;color:var(--muted)}"
	"main{padding:0 24px 24px}"
	"dl{display:flex;flex-wrap:wrap;gap:6px 28px;margin:10px 0 4px}"
	"dl div{min-width:90px}dt{color:var(--muted);font-size:12px}dd{margin:0;font-weight:600}"
	"dd.soon{color:var(--warn)}dd.expired{color:var(--bad)}"
	/* what an operator must see first: above everything in <main> */
	".alert{margin:14px 0 0;padding:8px 12px;border:2px solid var(--bad);"
	"border-radius:6px;background:#fff5f5}.alert ul{margin:4px 0 0}"
	"nav{font-size:12px;color:var(--muted)}nav a{margin-right:10px}"
	"a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}"
	"table{border-collapse:collapse;width:100%}"
	"th,td{text-align:left;padding:3px 8px;border-bottom:1px solid var(--line);vertical-align:top;"
	"white-space:nowrap}"
	/* what a client or a file wrote may be long: those cells wrap */
	"td.wrap{white-space:normal}"
	"th{font-size:12px;color:var(--muted);font-weight:600;background:var(--head)}"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
	"code,pre{font:12px/1.4 ui-monospace,'DejaVu Sans Mono',monospace}"
	"pre{margin:2px 0 0;white-space:pre-wrap;word-break:break-word}"
	".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;"
	"font-weight:600;color:#fff;vertical-align:middle}"
	".badge.ok{background:var(--ok)}.badge.bad{background:var(--bad)}"
	".badge.pending{background:var(--warn)}"
	".t{display:inline-block;margin:0 4px 2px 0;padding:0 5px;border-radius:3px;"
	"font-size:11px;border:1px solid}"
	".t.synced{color:var(--ok)}.t.pending{color:var(--warn)}"
	".t.nacked{color:#fff;background:var(--bad);border-color:var(--bad)}"
	/* clients: a row each, at most two lines of NACK message under it,
	 * so that a screen holds fifteen NACKing clients; the heads stay in
	 * view while the list scrolls */
	"#clients td{padding:2px 8px;font-size:13px}"
	"#clients thead th{position:sticky;top:0;z-index:1}"
	"#clients .badge{padding:0 6px;line-height:16px}#clients .t{line-height:14px;margin-bottom:0}"
	"tbody.client tr:not(:last-child) td{border-bottom:0}"
	"tbody.nacked td{background:#fff5f5}"
	".node,.cluster,.ident,.ua{white-space:normal;overflow-wrap:anywhere}"
	".node{min-width:12em;max-width:24em}.cluster{max-width:12em}.ident{max-width:28em}"
	".ua{max-width:14em}"
	"#clients tr.nacks td{padding:0 8px 4px}"
	/* a message's length must not widen the columns its row spans:
	 * no intrinsic width, then the cell's */
	".nack{width:0;min-width:100%}"
	".nack summary{display:flex;gap:10px;cursor:pointer;list-style:none}"
	".nack summary::-webkit-details-marker{display:none}"
	".nack summary::before{content:'\\25b8';color:var(--muted)}"
	".nack[open] summary::before{content:'\\25be'}"
	".nack .when{flex:none;white-space:nowrap;color:var(--muted)}.nack .when b{color:var(--fg)}"
	".nack .msg{flex:1;min-width:0;font:12px/1.35 ui-monospace,'DejaVu Sans Mono',monospace;"
	"color:var(--bad);white-space:pre-wrap;overflow-wrap:anywhere;display:-webkit-box;"
	"-webkit-box-orient:vertical;-webkit-line-clamp:2;overflow:hidden}"
	".nack[open] .msg{display:block;overflow:visible}"
	".muted,.empty{color:var(--muted)}"
	".errors{margin:0;padding-left:16px}"
	"svg text{font:11px system-ui,sans-serif;fill:var(--muted)}"
	".more{margin:6px 0;color:var(--muted)}"
	"#chart-summary{margin:0 0 4px}.legend{margin-left:16px;color:var(--muted)}"
	"#convergence svg#chart{display:block}";

static void h(struct xd_buf *out, const char *s)
{
	xd_html_str(out, s);
}

/* "12 ms", "1.4 s", "2.5 min" */
static void fmt_seconds(char *buf, size_t len, double s)
{
	if (s < 0.001)
		snprintf(buf, len, "%.2f ms", s * 1000);
	else if (s < 1)
		snprintf(buf, len, "%.0f ms", s * 1000);
	else if (s < 120)
		snprintf(buf, len, "%.1f s", s);
	else
		snprintf(buf, len, "%.1f min", s / 60);
}

/* A time as "2026-11-23 08:15:02 UTC (5m 6s ago)", machine-readable in
 * its datetime attribute. */
static void time_cell(struct xd_buf *out, int64_t at_ms, int64_t now_ms)
{
	char iso[32], text[32], age[32];
	time_t secs = (time_t)(at_ms / 1000);
	struct tm tm;

	xd_jw_time(iso, at_ms);
	gmtime_r(&secs, &tm);
	strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
	xd_text_age(age, sizeof(age), (now_ms - at_ms) / 1000);
	xd_buf_printf(out, "<time datetime=\"%s\">%s UTC</time> <span class=muted>(%s ago)</span>",
		      iso, text, age);
}

/* ---------------- header ---------------- */

/* One certificate's expiry: "2027-11-26 (in 364d 23h)", coloured from
 * XD_TLS_EXPIRY_WARN_DAYS before it, with its subject and file on
 * hover. */
static void expiry_item(struct xd_buf *out, const char *id, const char *label,
			const struct xd_tls_expiry *e, int64_t now_ms)
{
	int64_t left = e->not_after - now_ms / 1000;
	time_t secs = (time_t)e->not_after;
	char day[16], age[32], iso[32];
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	xd_jw_time(iso, e->not_after * 1000);
	xd_text_age(age, sizeof(age), left < 0 ? -left : left);
	xd_buf_printf(out, "<div><dt>%s</dt><dd id=%s class=\"%s\" title=\"", label, id,
		      left <= 0 ? "expired" :
		      left <= (int64_t)XD_TLS_EXPIRY_WARN_DAYS * 86400 ? "soon" : "valid");
	h(out, e->subject);
	xd_buf_printf(out, " in ");
	h(out, e->path);
	xd_buf_printf(out, "\">%s <time datetime=\"%s\">%s</time> (%s %s)</dd></div>",
		      left <= 0 ? "expired" : "expires", iso, day,
		      left <= 0 ? "since" : "in", age);
}

/* The xDS listener's certificates and failed handshakes. */
static void tls_items(struct xd_buf *out, const struct xd_tls *t,
		      int64_t now_ms)
{
	struct xd_tls_expiry cert, ca;

	xd_tls_expiry(t, &cert, &ca);
	expiry_item(out, "tls-certificate", "TLS certificate", &cert, now_ms);
	if (ca.path != NULL)
		expiry_item(out, "tls-client-ca", "client CA", &ca, now_ms);
	xd_buf_printf(out, "<div><dt>failed TLS handshakes</dt>"
			   "<dd id=tls-handshake-failures>%llu</dd></div>",
		      xd_handshakes_failed());
}

/* Where the snapshots come from; from etcd, whether it is read and
 * watched, at which revision, and the last failure on hover. */
static void source_item(struct xd_buf *out, const struct xd_admin_deps *deps,
			int64_t now_ms)
{
	const struct xd_config *cfg = deps->cfg;
	const struct xd_etcd_health *e = deps->etcd;
	char age[32];

	if (e == NULL) {
		xd_buf_printf(out, "<div><dt>snapshots from</dt><dd id=source><code>");
		h(out, cfg->snapshots);
		xd_buf_printf(out, "</code></dd></div>");
		return;
	}
	xd_text_age(age, sizeof(age), (now_ms - e->since_ms) / 1000);
	xd_buf_printf(out, "<div><dt>snapshots from etcd</dt><dd id=source class=\"%s\" title=\"",
		      e->healthy ? "valid" : "expired");
	h(out, e->last_error[0] != '\0' ? e->last_error : "no failure");
	xd_buf_printf(out, "\"><code>");
	h(out, cfg->etcd.endpoints[e->endpoint % cfg->etcd.nendpoints]);
	xd_buf_printf(out, " ");
	h(out, cfg->etcd.prefix);
	xd_buf_printf(out, "</code> revision <span id=etcd-revision>%lld</span>, "
			   "<span id=etcd-health>%s</span> for %s, %llu reconnect%s</dd></div>",
		      (long long)e->revision, e->healthy ? "watching" : "not watching",
		      age, (unsigned long long)e->reconnects,
		      e->reconnects == 1 ? "" : "s");
}

/* Beside the readiness badge: what the warnings at the top of <main>
 * say, so that a green "ready" never stands alone above them. */
static void warning_badges(struct xd_buf *out, const struct xd_admin_deps *deps)
{
	const struct xd_laststate *s = xd_reloader_laststate(deps->reloader);
	const struct xd_laststate_info *i = s != NULL ? xd_laststate_info(s) : NULL;

	if (i != NULL && i->serving)
		xd_buf_printf(out, " <a href=\"#last-good\" class=\"badge bad\" id=warn-last-good>"
				   "serving the last good state</a>");
	if (deps->rollout != NULL &&
	    xd_rollout_status(deps->rollout)->state == XD_ROLLOUT_FAILED)
		xd_buf_printf(out, " <a href=\"#rollout-failed\" class=\"badge bad\" id=warn-rollout>"
				   "rollout failed</a>");
	if (i != NULL && i->save_failing)
		xd_buf_printf(out, " <a href=\"#save-failing\" class=\"badge bad\" id=warn-save>"
				   "saves failing</a>");
}

static void header(struct xd_buf *out, const struct xd_admin_deps *deps,
		   const struct xd_status_overview *o, bool ready)
{
	const struct xd_reload_stats *rs = xd_reloader_stats(deps->reloader);
	char up[32], iso[32], age[32];

	xd_text_age(up, sizeof(up), (o->now_ms - o->started_ms) / 1000);
	xd_jw_time(iso, o->started_ms);
	xd_buf_printf(out, "<header><h1>xdsd <small id=version>");
	h(out, PACKAGE_VERSION);
	xd_buf_printf(out, "</small></h1>%s", ready ?
			      "<span class=\"badge ok\" id=ready>ready</span>" :
			      "<span class=\"badge bad\" id=ready>not ready</span>");
	/* beside "ready", each warning below it (warnings) */
	warning_badges(out, deps);
	xd_buf_printf(out, "<dl><div><dt>xDS listener</dt><dd id=listen><code>");
	h(out, deps->cfg->listen);
	/* `listen: HOST:0` takes a free port: show which */
	if (deps->xds_port != 0 && strlen(deps->cfg->listen) > 2 &&
	    strcmp(deps->cfg->listen + strlen(deps->cfg->listen) - 2, ":0") == 0)
		xd_buf_printf(out, " (port %d)", deps->xds_port);
	xd_buf_printf(out, "</code></dd></div>"
			   "<div><dt>up</dt><dd id=uptime title=\"since %s\">%s</dd></div>"
			   "<div><dt>streams</dt><dd id=streams>%zu</dd></div>"
			   "<div><dt>nodes</dt><dd id=nodes>%zu</dd></div>"
			   "<div><dt>synced</dt><dd id=synced>%zu</dd></div>"
			   "<div><dt>pending</dt><dd id=pending>%zu",
		      iso, up, o->streams, o->nodes, o->synced, o->pending);
	/* how long the oldest response has waited for its answer */
	if (o->oldest_pending_ms >= 1000) {
		xd_text_age(age, sizeof(age), (long long)(o->oldest_pending_ms / 1000));
		xd_buf_printf(out, " <small class=age title=\"oldest response waiting for its ACK\">%s</small>", age);
	}
	xd_buf_printf(out, "</dd></div>"
			   "<div><dt>NACKed</dt><dd id=nacked>%zu</dd></div>"
			   "<div><dt>reloads ok / failed</dt><dd id=reloads>%llu / %llu</dd></div>",
		      o->nacked, rs->ok, rs->failed);
	source_item(out, deps, o->now_ms);
	if (deps->tls != NULL)
		tls_items(out, deps->tls, o->now_ms);
	xd_buf_printf(out, "</dl>");
	xd_buf_printf(out, "<nav><a href=\"/status\">refresh</a>"
			   "<a href=\"/status.json\">/status.json</a>"
			   "<a href=\"/clients\">/clients</a>"
			   "<a href=\"/metrics\">/metrics</a>"
			   "<a href=\"/config_dump\">/config_dump</a></nav></header>\n");
}

/* ---------------- warnings ---------------- */

/* Served instead of refused snapshots: first thing on the page. */
static void last_good(struct xd_buf *out, const struct xd_laststate *s)
{
	const struct xd_laststate_info *i;
	char when[32];

	if (s == NULL || !(i = xd_laststate_info(s))->serving)
		return;
	xd_jw_time(when, i->served_saved_at_ms);
	xd_buf_printf(out, "<section id=last-good class=alert><strong>Serving the last good state</strong>, "
			   "saved <time>%s</time> in <code>", when);
	h(out, i->path);
	xd_buf_printf(out, "</code>: the snapshots were refused at start-up "
			   "(%zu error%s) and stay refused until fixed.<ul>",
		      i->nerrors, i->nerrors == 1 ? "" : "s");
	for (size_t k = 0; k < i->nkept; k++) {
		xd_buf_printf(out, "<li><code>");
		h(out, i->errors[k]);
		xd_buf_printf(out, "</code></li>");
	}
	xd_buf_printf(out, "</ul></section>\n");
}

/* The newest save of the last good state failed: a restart with broken
 * snapshots would serve an older state than this one. */
static void save_failing(struct xd_buf *out, const struct xd_laststate *s,
			 int64_t now_ms)
{
	const struct xd_laststate_info *i;

	if (s == NULL || !(i = xd_laststate_info(s))->save_failing)
		return;
	xd_buf_printf(out, "<section id=save-failing class=alert><strong>The last good state "
			   "cannot be saved</strong>: the last save failed ");
	time_cell(out, i->last_save_error_at_ms, now_ms);
	xd_buf_printf(out, ": <code>");
	h(out, i->last_save_error != NULL ? i->last_save_error : "");
	xd_buf_printf(out, "</code>. The snapshots are served all the same, but <code>");
	h(out, i->path);
	if (i->saved_at_ms > 0) {
		xd_buf_printf(out, "</code> holds an older state, saved ");
		time_cell(out, i->saved_at_ms, now_ms);
		xd_buf_printf(out, ", which a start with broken snapshots would serve.</section>\n");
	} else {
		xd_buf_printf(out, "</code> holds nothing: a start with broken snapshots "
				   "would be refused.</section>\n");
	}
}

/* The last staged rollout failed: its change was rolled back, and the
 * snapshot files hold what is not served. */
static void rollout_failed(struct xd_buf *out, const struct xd_rollout *ro,
			   int64_t now_ms)
{
	const struct xd_rollout_status *st;

	if (ro == NULL || (st = xd_rollout_status(ro))->state != XD_ROLLOUT_FAILED)
		return;
	xd_buf_printf(out, "<section id=rollout-failed class=alert><strong>Staged rollout %llu "
			   "failed</strong> ",
		      (unsigned long long)st->id);
	time_cell(out, st->ended_ms, now_ms);
	xd_buf_printf(out, " and was rolled back: <code>");
	h(out, st->reason);
	xd_buf_printf(out, "</code>. Every node, canaries included, is served the "
			   "snapshots from before the reload (");
	h(out, st->trigger != NULL ? st->trigger : "");
	xd_buf_printf(out, ") that started it; what that reload read is not served "
			   "until a reload changes it (see Staged rollout below).</section>\n");
}

/* ---------------- snapshots ---------------- */

static void snapshots(struct xd_buf *out, const struct xd_admin_deps *deps,
		      int64_t now_ms)
{
	size_t n;
	struct xd_snapshot **snaps = xd_cache_snapshots(deps->cache, &n);
	char size[32];

	xd_buf_printf(out, "<section id=snapshots><h2>Snapshots <small>%zu</small></h2>"
			   "<table><thead><tr><th>key</th><th>version</th><th>serving since</th>"
			   "<th>resources</th><th class=num>bytes</th></tr></thead><tbody>\n",
		      n);
	for (size_t i = 0; i < n; i++) {
		const struct xd_snapshot *s = snaps[i];
		size_t bytes = xd_status_snapshot_bytes(s);
		char desc[512];

		xd_buf_printf(out, "<tr class=snapshot><td>");
		h(out, xd_snapshot_key(s));
		xd_buf_printf(out, "</td><td><code>");
		h(out, xd_snapshot_version(s));
		xd_buf_printf(out, "</code></td><td>");
		time_cell(out, xd_snapshot_since(s), now_ms);
		xd_buf_printf(out, "</td><td class=wrap>");
		/* as the log says it at every reload: clusters first */
		xd_snapshot_describe(s, desc, sizeof(desc));
		if (strcmp(desc, "empty") == 0)
			xd_buf_printf(out, "<span class=muted>empty</span>");
		else
			h(out, desc);
		xd_text_bytes(size, sizeof(size), (double)bytes);
		xd_buf_printf(out, "</td><td class=num title=\"%zu bytes\">%s</td></tr>\n",
			      bytes, size);
		xd_snapshot_unref(snaps[i]);
	}
	free(snaps);
	if (n == 0)
		xd_buf_printf(out, "<tr><td colspan=5 class=empty>no snapshot is served</td></tr>\n");
	xd_buf_printf(out, "</tbody></table></section>\n");
}

/* ---------------- reloads ---------------- */

/* Errors shown per reload: twenty reloads of twenty errors would bury
 * the rest of the page; /status.json has all that are kept. */
#define PAGE_ERRORS 5

/* What a good reload changed, under its row: per snapshot, the
 * resources its record names (a few: XD_DIFF_SUMMARY_LISTED), each
 * with + added, - removed or ~ changed, and how many more it counted. */
static void reload_changes(struct xd_buf *out, const struct xd_diff *d)
{
	size_t named = 0, all = d->added + d->removed + d->changed;

	if (d->listed == 0)
		return;
	xd_buf_printf(out, "<ul class=errors>");
	for (size_t i = 0; i < d->nkeys; i++) {
		const struct xd_diff_key *k = &d->keys[i];

		for (size_t t = 0; t < k->nsections; t++) {
			const struct xd_diff_section *s = &k->sections[t];

			if (s->nres == 0)
				continue;
			xd_buf_printf(out, "<li>");
			h(out, k->key);
			xd_buf_printf(out, " %s:", xd_section(s->section).key);
			for (size_t r = 0; r < s->nres; r++) {
				xd_buf_printf(out, "%s <code>%c", r ? "," : "",
					      s->res[r].change == XD_DIFF_ADDED ? '+' :
					      s->res[r].change == XD_DIFF_REMOVED ? '-' : '~');
				h(out, s->res[r].name);
				xd_buf_printf(out, "</code>");
			}
			xd_buf_printf(out, "</li>");
			named += s->nres;
		}
	}
	xd_buf_printf(out, "</ul>");
	if (all > named)
		xd_buf_printf(out, "<span class=muted>and %zu more changed, not named</span>",
			      all - named);
}

/* A reload's result: failed, or ok, and with a staged rollout what
 * became of its change (reload.h, xd_reload_rollout). */
static void reload_result(struct xd_buf *out, const struct xd_reload_record *r)
{
	const char *badge = "<span class=\"badge ok\">ok</span>";

	if (!r->ok)
		badge = "<span class=\"badge bad\">failed</span>";
	else if (r->rollout == XD_RELOAD_STAGED)
		badge = "<span class=\"badge pending\" title=\"served to the canaries: its rollout is under way\">staged</span>";
	else if (r->rollout == XD_RELOAD_ROLLED_BACK)
		badge = "<span class=\"badge bad\" title=\"its staged rollout failed or was aborted: the change is not served\">rolled back</span>";
	else if (r->rollout == XD_RELOAD_REPLACED)
		badge = "<span class=\"badge ok\" title=\"a later reload's rollout replaced its own\">ok</span> <span class=muted>replaced</span>";
	xd_buf_printf(out, "%s", badge);
}

static void reload_row(struct xd_buf *out, const struct xd_reload_record *r,
		       int64_t now_ms)
{
	char took[32];

	fmt_seconds(took, sizeof(took), r->seconds);
	xd_buf_printf(out, "<tr class=\"reload %s\"><td>",
		      !r->ok ? "failed" :
		      r->rollout == XD_RELOAD_ROLLED_BACK ? "rolled-back" : "ok");
	time_cell(out, r->at_ms, now_ms);
	xd_buf_printf(out, "</td><td>");
	h(out, r->trigger);
	if (r->revision > 0)
		xd_buf_printf(out, " <span class=muted>etcd revision %lld</span>",
			      (long long)r->revision);
	xd_buf_printf(out, "</td><td>");
	reload_result(out, r);
	xd_buf_printf(out, "</td><td class=num>%s</td>"
			   "<td class=num>%zu</td><td class=num>%zu</td><td class=num>%zu</td><td class=wrap>",
		      took, r->snapshots, r->files, r->changed);
	/* the kept errors are among all of them ("and N more") */
	XD_ASSERT_INFO(r->nkept <= r->nerrors, "reload by %s: %zu of %zu errors kept",
		       r->trigger, r->nkept, r->nerrors);
	if (r->nkept > 0) {
		size_t shown = r->nkept < PAGE_ERRORS ? r->nkept : PAGE_ERRORS;

		xd_buf_printf(out, "<ul class=errors>");
		for (size_t i = 0; i < shown; i++) {
			xd_buf_printf(out, "<li><code>");
			h(out, r->errors[i]);
			xd_buf_printf(out, "</code></li>");
		}
		xd_buf_printf(out, "</ul>");
		if (r->nerrors > shown)
			xd_buf_printf(out, "<span class=muted>and %zu more (/status.json, the log)</span>",
				      r->nerrors - shown);
	}
	if (r->ok && r->diff != NULL)
		reload_changes(out, r->diff);
	xd_buf_printf(out, "</td></tr>\n");
}

/* Where accepted snapshots are saved (state_dir:), when they last
 * were, and how the saves went; nothing with state_dir: off. */
static void saved_state(struct xd_buf *out, const struct xd_laststate *s,
			int64_t now_ms)
{
	const struct xd_laststate_info *i;

	if (s == NULL)
		return;
	i = xd_laststate_info(s);
	xd_buf_printf(out, "<p id=saved-state>Last good state: <code>");
	h(out, i->path);
	xd_buf_printf(out, "</code>, ");
	if (i->saved_at_ms > 0) {
		xd_buf_printf(out, "saved ");
		time_cell(out, i->saved_at_ms, now_ms);
	} else {
		xd_buf_printf(out, "nothing saved yet");
	}
	xd_buf_printf(out, "; saves: %llu written, %llu unchanged, %llu failed",
		      i->saves_ok, i->saves_unchanged, i->saves_failed);
	if (i->last_save_error != NULL) {
		xd_buf_printf(out, " <span class=\"badge bad\">last failure</span> <code>");
		h(out, i->last_save_error);
		xd_buf_printf(out, "</code>");
	}
	xd_buf_printf(out, "</p>");
}

static void reloads(struct xd_buf *out, const struct xd_reloader *r,
		    int64_t now_ms)
{
	size_t n = xd_reload_history_count(r);

	xd_buf_printf(out, "<section id=reloads><h2>Reloads <small>the last %d</small></h2>"
			   "<table><thead><tr><th>finished</th><th>trigger</th><th>result</th>"
			   "<th class=num>took</th><th class=num>snapshots</th><th class=num>files</th>"
			   "<th class=num>changed</th><th>errors, or what changed</th></tr></thead><tbody>\n",
		      XD_RELOAD_HISTORY);
	for (size_t i = 0; i < n; i++)
		reload_row(out, xd_reload_history(r, i), now_ms);
	xd_buf_printf(out, "</tbody></table>");
	saved_state(out, xd_reloader_laststate(r), now_ms);
	xd_buf_printf(out, "</section>\n");
}

/* ---------------- rollout ---------------- */

/* A row of node names (`n` of `total`), when there are any. */
static void names_row(struct xd_buf *out, const char *what, const char *id,
		      char *const *names, size_t n, size_t total)
{
	if (total == 0)
		return;
	xd_buf_printf(out, "<div><dt>%s</dt><dd id=%s class=wrap>", what, id);
	for (size_t i = 0; i < n; i++) {
		xd_buf_printf(out, "%s", i > 0 ? ", " : "");
		h(out, names[i]);
	}
	if (total > n)
		xd_buf_printf(out, " (and %zu more)", total - n);
	xd_buf_printf(out, "</dd></div>");
}

/* The staged rollout under way or the last one, with its NACKs; only
 * with `rollout:`. */
static void rollout(struct xd_buf *out, const struct xd_rollout *ro,
		    int64_t now_ms)
{
	const struct xd_rollout_status *st;
	const char *badge;

	if (ro == NULL)
		return;
	st = xd_rollout_status(ro);
	badge = st->state == XD_ROLLOUT_FAILED	 ? "bad" :
		st->state == XD_ROLLOUT_PROMOTED ? "ok" :
						   "pending";
	xd_buf_printf(out, "<section id=rollout><h2>Staged rollout</h2><dl>"
			   "<div><dt>state</dt><dd id=rollout-state><span class=\"badge %s\">%s</span></dd></div>",
		      badge, xd_rollout_state_name(st->state));
	if (st->id != 0) {
		xd_buf_printf(out, "<div><dt>rollout</dt><dd>%llu (",
			      (unsigned long long)st->id);
		h(out, st->trigger != NULL ? st->trigger : "");
		xd_buf_printf(out, ", %zu key%s changed)</dd></div><div><dt>started</dt><dd>",
			      st->keys, st->keys == 1 ? "" : "s");
		time_cell(out, st->started_ms, now_ms);
		xd_buf_printf(out, "</dd></div><div><dt>canaries answered</dt><dd id=rollout-canaries>%zu / %zu</dd></div>"
				   "<div><dt>NACKs / max_nacks</dt><dd id=rollout-nacks>%llu / %llu</dd></div>",
			      st->answered, st->canaries,
			      (unsigned long long)st->nacks,
			      (unsigned long long)st->max_nacks);
		xd_buf_printf(out, "<div><dt>replicas</dt><dd id=rollout-replicas>%zu on it (record: ",
			      st->replicas);
		h(out, xd_fleet_where(xd_rollout_fleet(ro)));
		xd_buf_printf(out, ")</dd></div>");
		names_row(out, "canaries waiting", "rollout-waiting",
			  st->fleet.waiting, st->fleet.nwaiting,
			  st->fleet.waiting_total);
		names_row(out, "canaries past canary_timeout", "rollout-stuck",
			  st->fleet.stuck, st->fleet.nstuck,
			  st->fleet.stuck_total);
		for (size_t i = 0; i < st->fleet.nkeys; i++) {
			if (st->fleet.keys[i].proven)
				continue;
			xd_buf_printf(out, "<div><dt>no canary ACKed</dt><dd class=wrap>snapshot '");
			h(out, st->fleet.keys[i].key);
			xd_buf_printf(out, "' (%zu canar%s served it)</dd></div>",
				      st->fleet.keys[i].canaries,
				      st->fleet.keys[i].canaries == 1 ? "y" : "ies");
		}
	}
	if (st->reason[0] != '\0') {
		xd_buf_printf(out, "<div><dt>why</dt><dd class=wrap>");
		h(out, st->reason);
		xd_buf_printf(out, "</dd></div>");
	}
	xd_buf_printf(out, "</dl>");
	if (st->fleet.nnack_list > 0) {
		const struct xd_rollout_nack *kept = st->fleet.nack_list;

		xd_buf_printf(out, "<ul class=errors>");
		for (size_t i = 0; i < st->fleet.nnack_list; i++) {
			xd_buf_printf(out, "<li><code>");
			h(out, kept[i].node_id);
			xd_buf_printf(out, " ");
			h(out, kept[i].type);
			xd_buf_printf(out, " ");
			h(out, kept[i].version);
			xd_buf_printf(out, ": ");
			h(out, kept[i].message);
			xd_buf_printf(out, "</code></li>");
		}
		xd_buf_printf(out, "</ul>");
	}
	xd_buf_printf(out, "</section>\n");
}

/* ---------------- load reports ---------------- */

/* Rows of the load reports' table: the busiest series (/loads and
 * /metrics have them all). */
#define LOAD_ROWS 50

struct load_rows {
	struct xd_load_series_view *v;
	size_t n, cap;
};

static void take_load_row(void *arg, const struct xd_load_series_view *v)
{
	struct load_rows *r = arg;

	if (v->nodes == 0)
		return; /* nothing reported within the window */
	r->v = xd_grow(r->v, &r->cap, r->n + 1, sizeof(*r->v));
	r->v[r->n++] = *v;
}

static int busier(const void *pa, const void *pb)
{
	const struct xd_load_series_view *a = pa, *b = pb;

	if (a->requests_per_second != b->requests_per_second)
		return a->requests_per_second < b->requests_per_second ? 1 : -1;
	return strcmp(a->cluster, b->cluster);
}

/* What clients report of the load they send (LRS, loads/store.h): per
 * cluster and locality, over the window. */
static void loads(struct xd_buf *out, const struct xd_admin_deps *deps)
{
	struct load_rows r = {0};
	struct xd_loads_stats ls;
	struct xd_lrs_stats rs;

	if (deps->loads == NULL || deps->lrs == NULL)
		return;
	xd_loads_visit_series(deps->loads, xd_mono_ms(), take_load_row, &r);
	xd_loads_stats(deps->loads, &ls);
	xd_lrs_service_stats(deps->lrs, &rs);
	if (r.n > 1)
		qsort(r.v, r.n, sizeof(*r.v), busier);
	xd_buf_printf(out, "<section id=loads><h2>Load reports <small>%zu reporting stream%s, over the last %llu s",
		      rs.reporters, rs.reporters == 1 ? "" : "s",
		      (unsigned long long)(ls.window_ms / 1000));
	if (r.n > LOAD_ROWS)
		xd_buf_printf(out, "; the %d busiest of %zu", LOAD_ROWS, r.n);
	xd_buf_printf(out, "</small></h2><table><thead><tr><th>cluster</th><th>locality</th>"
			   "<th class=num>clients</th><th class=num>requests/s</th>"
			   "<th class=num>errors/s</th><th class=num>in flight</th>"
			   "<th class=num>requests since start</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < r.n && i < LOAD_ROWS; i++) {
		const struct xd_load_series_view *v = &r.v[i];

		xd_buf_printf(out, "<tr class=load><td>");
		h(out, v->cluster);
		xd_buf_printf(out, "</td><td>");
		if (v->locality[0] == '\0')
			xd_buf_printf(out, "<span class=muted>dropped</span>");
		else
			h(out, v->locality);
		xd_buf_printf(out, "</td><td class=num>%zu</td><td class=num>%.1f</td>"
				   "<td class=num>%.1f</td><td class=num>%llu</td>"
				   "<td class=num>%llu</td></tr>\n",
			      v->nodes, v->requests_per_second,
			      v->errors_per_second,
			      (unsigned long long)v->in_progress,
			      (unsigned long long)v->requests);
	}
	if (r.n == 0)
		xd_buf_printf(out, "<tr><td colspan=7 class=empty>no client reported load within the window</td></tr>\n");
	xd_buf_printf(out, "</tbody></table></section>\n");
	free(r.v);
}

/* ---------------- replicas ---------------- */

/* One replica's row: `r` its registration (record.h). */
static void replica_row(struct xd_buf *out, const struct xd_rollout_report *r,
			bool self, uint64_t rollout_id)
{
	const char *badge = r->health == XD_REPLICA_SERVING  ? "ok" :
			    r->health == XD_REPLICA_DEGRADED ? "pending" :
							       "bad";

	xd_buf_printf(out, "<tr class=replica><td class=wrap>");
	h(out, r->replica != NULL ? r->replica : "");
	if (self)
		xd_buf_printf(out, " <span class=muted>this one</span>");
	xd_buf_printf(out, "</td><td><span class=\"badge %s\" title=\"", badge);
	h(out, r->health_why != NULL ? r->health_why : "");
	xd_buf_printf(out, "\">");
	h(out, xd_replica_health_name(r->health));
	xd_buf_printf(out, "</span></td><td>");
	h(out, r->version != NULL ? r->version : "");
	xd_buf_printf(out, "</td><td class=num>%lld</td><td><code>", (long long)r->revision);
	h(out, r->serving);
	xd_buf_printf(out, "</code></td><td class=num>%zu</td><td class=num>%zu</td><td>",
		      r->streams, r->clients);
	if (r->rollout != 0 && r->rollout == rollout_id)
		xd_buf_printf(out, "%llu: %zu / %zu canaries answered, %llu NACK%s",
			      (unsigned long long)r->rollout, r->answered, r->canaries,
			      (unsigned long long)r->nacks, r->nacks == 1 ? "" : "s");
	else
		xd_buf_printf(out, "<span class=muted>-</span>");
	xd_buf_printf(out, "</td><td class=wrap>");
	h(out, r->admin != NULL && r->admin[0] != '\0' ? r->admin : "-");
	xd_buf_printf(out, "</td></tr>\n");
}

/* The fleet's replicas as they registered (rollout/fleet.h), this one
 * first, and the rollout each reports on; from etcd only (from files,
 * a replica is alone). */
static void replicas(struct xd_buf *out, const struct xd_admin_deps *deps)
{
	struct xd_fleet *f = deps->fleet;
	const struct xd_rollout_record *rec;
	struct xd_rollout_report self;
	struct xd_buf text = XD_BUF_INIT;
	char why[256];
	size_t listed = 1;

	if (f == NULL || !xd_fleet_shared(f))
		return;
	rec = xd_fleet_record(f);
	for (size_t i = 0; i < xd_fleet_nreports(f); i++)
		listed += xd_fleet_report_current(f, i);
	xd_buf_printf(out, "<section id=replicas><h2>Replicas <small>%zu</small></h2>"
			   "<table><thead><tr><th>replica</th><th>health</th><th>version</th>"
			   "<th class=num>etcd revision</th><th>serving</th><th class=num>streams</th>"
			   "<th class=num>nodes</th><th>rollout</th><th>admin</th></tr></thead><tbody>\n",
		      listed);
	xd_fleet_self_json(f, &text);
	if (xd_rollout_report_read(&self, text.data, text.len, why, sizeof(why)) == 0) {
		replica_row(out, &self, true, rec != NULL ? rec->id : 0);
		xd_rollout_report_clear(&self);
	}
	xd_buf_free(&text);
	for (size_t i = 0; i < xd_fleet_nreports(f); i++)
		if (xd_fleet_report_current(f, i))
			replica_row(out, xd_fleet_report(f, i), false,
				    rec != NULL ? rec->id : 0);
	xd_buf_printf(out, "</tbody></table>");
	if (rec != NULL) {
		xd_buf_printf(out, "<p id=fleet-rollout>The fleet's rollout: %llu, %s (by ",
			      (unsigned long long)rec->id, xd_rollout_state_name(rec->state));
		h(out, rec->by != NULL ? rec->by : "");
		xd_buf_printf(out, ")%s", rec->reason != NULL && rec->reason[0] ? ": " : "");
		h(out, rec->reason != NULL ? rec->reason : "");
		xd_buf_printf(out, "</p>");
	}
	xd_buf_printf(out, "</section>\n");
}

/* ---------------- clients ---------------- */

/* The columns of a client's row; its NACKs span them all. */
#define CLIENT_COLUMNS 9

/* A cell of client-chosen text that may wrap, at most as wide as its
 * class says (a td's own max-width is not honoured by table layout; a
 * div's is), so that one long user agent cannot take the row's room. */
static void wrapped_cell(struct xd_buf *out, const char *cls, const char *s)
{
	xd_buf_printf(out, "<td><div class=%s>", cls);
	h(out, s);
	xd_buf_printf(out, "</div></td>");
}

/* Under the client's row, across the table: each NACKed type, when, and
 * the client's message, clamped to two lines (the whole message when
 * opened), so that a fleet of NACKing clients still fits a screen.
 * Nothing when no NACK carried a message. */
static void nack_row(struct xd_buf *out, const struct xd_client_view *c,
		     int64_t now_ms)
{
	char iso[32], text[32], age[32];
	bool open = false;

	for (size_t i = 0; i < c->ntypes; i++) {
		const struct xd_client_type *ct = &c->types[i];
		time_t secs;
		struct tm tm;

		if (ct->sync != XD_SUB_NACKED || ct->sub->nack_message == NULL)
			continue;
		if (!open)
			xd_buf_printf(out, "<tr class=nacks><td colspan=%d>", CLIENT_COLUMNS);
		open = true;
		secs = (time_t)(ct->sub->nack_at_ms / 1000);
		gmtime_r(&secs, &tm);
		strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
		xd_jw_time(iso, ct->sub->nack_at_ms);
		xd_text_age(age, sizeof(age), (now_ms - ct->sub->nack_at_ms) / 1000);
		xd_buf_printf(out, "<details class=nack><summary><span class=when><b>");
		h(out, ct->label);
		xd_buf_printf(out, "</b> NACKed <time datetime=\"%s\" title=\"%s UTC\">%s ago</time></span>"
				   "<span class=msg>",
			      iso, text, age);
		h(out, ct->sub->nack_message);
		xd_buf_printf(out, "</span></summary></details>");
	}
	if (open)
		xd_buf_printf(out, "</td></tr>\n");
}

/* One client: a row, and its NACKs under it, grouped in a tbody. */
static void client_row(struct xd_buf *out, const struct xd_client_view *c,
		       enum xd_sub_sync state, int64_t now_ms)
{
	const char *name = xd_sub_sync_name(state);
	char age[32];

	xd_buf_printf(out, "<tbody class=\"client %s\"><tr><td><span class=\"badge %s\">%s</span>",
		      name, state == XD_SUB_SYNCED ? "ok" : state == XD_SUB_NACKED ? "bad" : "pending",
		      name);
	/* pending on the client: for how long its oldest response waits */
	if (state == XD_SUB_PENDING && xd_client_view_oldest(c) >= 1000) {
		xd_text_age(age, sizeof(age),
			    (long long)(xd_client_view_oldest(c) / 1000));
		xd_buf_printf(out, " <small class=age title=\"oldest response waiting for its ACK\">%s</small>", age);
	}
	xd_buf_printf(out, "</td><td><div class=node>");
	if (c->has_node)
		h(out, c->node_id);
	else
		xd_buf_printf(out, "<span class=muted>(no request yet)</span>");
	xd_buf_printf(out, "</div></td>");
	wrapped_cell(out, "cluster", c->node_cluster);
	/* what the client's certificate proves; "-" over plaintext or TLS
	 * without a client certificate */
	if (c->identity != NULL)
		wrapped_cell(out, "ident", c->identity);
	else
		xd_buf_printf(out, "<td><div class=ident><span class=muted>-</span></div></td>");
	xd_buf_printf(out, "<td><div class=ua>");
	h(out, c->user_agent_name);
	xd_buf_putc(out, ' ');
	h(out, c->user_agent_version);
	xd_text_age(age, sizeof(age), (now_ms - c->since_ms) / 1000);
	xd_buf_printf(out, "</div></td><td><code>");
	h(out, c->peer);
	xd_buf_printf(out, "</code></td><td>%s %s <span class=muted>%s</span></td><td>",
		      c->method->aggregated ? "ADS" : xd_rtype_info(c->method->type)->service,
		      c->method->delta ? "delta" : "sotw", age);
	if (c->snapshot != NULL)
		h(out, xd_snapshot_key(c->snapshot));
	else
		xd_buf_printf(out, "<span class=muted>none</span>");
	xd_buf_printf(out, "</td><td>");
	for (size_t i = 0; i < c->ntypes; i++) {
		const struct xd_client_type *ct = &c->types[i];

		xd_buf_printf(out, "<span class=\"t %s\" title=\"acked ", xd_sub_sync_name(ct->sync));
		h(out, ct->sub->acked_version[0] ? ct->sub->acked_version : "nothing");
		xd_buf_printf(out, "\">");
		h(out, ct->label);
		/* how long its response has waited for an answer */
		if (ct->pending_since_ms != 0) {
			xd_text_age(age, sizeof(age), (long long)(ct->pending_ms / 1000));
			xd_buf_printf(out, " <small class=age title=\"waiting for its ACK\">%s</small>", age);
		}
		xd_buf_printf(out, "</span>");
	}
	xd_buf_printf(out, "</td></tr>\n");
	if (state == XD_SUB_NACKED)
		nack_row(out, c, now_ms);
	xd_buf_printf(out, "</tbody>\n");
}

/* NACKed streams go first, so the page leads with what needs a look. */
static const enum xd_sub_sync order[] = {XD_SUB_NACKED, XD_SUB_PENDING,
					 XD_SUB_SYNCED};
#define NORDER (sizeof(order) / sizeof(order[0]))

/*
 * The page's place between two steps (pager.h): the streams are counted
 * and their rows written in one walk, a slice a turn; each state's rows
 * are kept apart (at most XD_STATUS_PAGE_MAX_CLIENTS each: which of them
 * show depends on how many streams the states before it have, known at
 * the end), the rest of the page is written at the last step.
 */
struct xd_status_page {
	const struct xd_admin_deps *deps;
	bool ready;
	struct xd_status_count *count;
	struct xd_buf rows[NORDER];
	/* where each kept row ends in its state's buffer */
	size_t ends[NORDER][XD_STATUS_PAGE_MAX_CLIENTS];
	size_t nrows[NORDER];
};

static void row_each(void *arg, const struct xd_client_view *c,
		     enum xd_sub_sync state, int64_t now_ms)
{
	struct xd_status_page *pg = arg;
	size_t i = 0;

	while (order[i] != state)
		i++;
	XD_ASSERT_INFO(i < NORDER, "stream %llu in state %d",
		       (unsigned long long)c->stream_id, (int)state);
	if (pg->nrows[i] == XD_STATUS_PAGE_MAX_CLIENTS)
		return; /* past what the page can show of this state */
	client_row(&pg->rows[i], c, state, now_ms);
	pg->ends[i][pg->nrows[i]++] = pg->rows[i].len;
}

static void clients(struct xd_buf *out, const struct xd_status_page *pg,
		    const struct xd_status_overview *o)
{
	size_t shown = 0, cut;

	xd_buf_printf(out, "<section id=clients><h2>Clients <small>%zu streams",
		      o->streams);
	if (o->nacked > 0)
		xd_buf_printf(out, ", <a href=\"/clients?state=nacked\">%zu NACKed</a>",
			      o->nacked);
	xd_buf_printf(out, "</small></h2>"
			   "<table><thead><tr><th>state</th><th>node</th><th>cluster</th>"
			   "<th>identity</th><th>user agent</th><th>peer</th><th>stream, age</th>"
			   "<th>snapshot</th><th>types</th></tr></thead>\n");
	/* each state's rows in stream order, up to the bound overall */
	for (size_t i = 0; i < NORDER; i++) {
		size_t take = pg->nrows[i];

		if (take > XD_STATUS_PAGE_MAX_CLIENTS - shown)
			take = XD_STATUS_PAGE_MAX_CLIENTS - shown;
		if (take > 0)
			xd_buf_append(out, pg->rows[i].data, pg->ends[i][take - 1]);
		shown += take;
	}
	/* each stream is a row or counted in "N more": the rows and the
	 * overview come from the same walk */
	XD_ASSERT_INFO(shown <= o->streams && shown <= XD_STATUS_PAGE_MAX_CLIENTS &&
			       (shown == XD_STATUS_PAGE_MAX_CLIENTS || shown == o->streams),
		       "%zu rows for %zu streams", shown, o->streams);
	cut = o->streams - shown;
	if (o->streams == 0)
		xd_buf_printf(out, "<tbody><tr><td colspan=%d class=empty>no client is connected"
				   "</td></tr></tbody>\n",
			      CLIENT_COLUMNS);
	xd_buf_printf(out, "</table>\n");
	if (cut > 0)
		xd_buf_printf(out, "<p class=more id=clients-more>%zu more: use "
				   "<a href=\"/clients\">/clients</a></p>\n",
			      cut);
	xd_buf_printf(out, "</section>\n");
}

/* ---------------- convergence chart ---------------- */

#define CHART_W 960
#define CHART_H 180
#define CHART_LEFT 64
#define CHART_RIGHT 16
#define CHART_TOP 12
#define CHART_BOTTOM 30
/* Faster than this is drawn at it: the log scale needs a floor. */
#define CHART_MIN_SECONDS 0.0001

/* One colour per resource type (the last: types xdsd does not serve). */
static const char *type_colour(int t)
{
	static const char *palette[] = {"#0969da", "#1a7f37", "#8250df", "#bf3989",
					"#9a6700", "#cf222e", "#116329", "#0550ae",
					"#6e7781"};

	return palette[(size_t)t % (sizeof(palette) / sizeof(palette[0]))];
}

/* The type's slot in the palette and the legend. */
static int sample_type(const struct xd_convergence_sample *s)
{
	return (int)s->type < XD_RTYPE_COUNT ? (int)s->type : XD_RTYPE_COUNT;
}

static const char *type_name(int t)
{
	return t < XD_RTYPE_COUNT ? xd_rtype_info((enum xd_rtype)t)->service : "other";
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static void decade_label(char *buf, size_t len, int d)
{
	static const char *names[] = {"0.1 ms", "1 ms", "10 ms", "100 ms",
				      "1 s", "10 s", "100 s", "1000 s"};

	if (d >= -4 && d <= 3)
		snprintf(buf, len, "%s", names[d + 4]);
	else
		snprintf(buf, len, "1e%d s", d);
}

static void clock_label(char *buf, size_t len, int64_t ms)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

static void chart(struct xd_buf *out, const struct xd_sessions_stats *st)
{
	size_t n = st->nrecent;
	size_t first = (st->recent_next + XD_SESSIONS_RECENT - n) % XD_SESSIONS_RECENT;
	float sorted[XD_SESSIONS_RECENT];
	bool seen[XD_RTYPE_COUNT + 1] = {false};
	double pw = CHART_W - CHART_LEFT - CHART_RIGHT;
	double ph = CHART_H - CHART_TOP - CHART_BOTTOM;
	int64_t t0, t1;
	int lo, hi;
	char a[32], b[32], c[32], when[16];

	/* the ring (stats.h) is what `sorted` is sized for */
	XD_ASSERT_INFO(n <= XD_SESSIONS_RECENT &&
			       st->recent_next < XD_SESSIONS_RECENT,
		       "%zu convergence samples, next %zu", n,
		       (size_t)st->recent_next);
	xd_buf_printf(out, "<section id=convergence><h2>Convergence <small>from a change "
			   "being served to a client's ACK, the last %d</small></h2>\n",
		      XD_SESSIONS_RECENT);
	if (n == 0) {
		xd_buf_printf(out, "<p class=empty id=chart-empty>No convergence yet: a sample "
				   "is taken when a client connected before a change ACKs it.</p>"
				   "</section>\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct xd_convergence_sample *s =
			&st->recent[(first + i) % XD_SESSIONS_RECENT];

		sorted[i] = s->seconds;
		seen[sample_type(s)] = true;
	}
	qsort(sorted, n, sizeof(sorted[0]), cmp_float);
	fmt_seconds(a, sizeof(a), sorted[n / 2]);
	fmt_seconds(b, sizeof(b), sorted[(n * 9) / 10]);
	fmt_seconds(c, sizeof(c), sorted[n - 1]);
	xd_buf_printf(out, "<p id=chart-summary>%zu samples: median %s, 90th percentile %s, "
			   "slowest %s <span class=legend>",
		      n, a, b, c);
	for (int t = 0; t <= XD_RTYPE_COUNT; t++)
		if (seen[t])
			xd_buf_printf(out, "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\">"
					   "<circle cx=\"5\" cy=\"5\" r=\"4\" fill=\"%s\"/></svg> %s ",
				      type_colour(t), type_name(t));
	xd_buf_printf(out, "</span></p>\n");

	/* y: whole decades around the samples; x: their time span */
	lo = (int)floor(log10(fmax(sorted[0], CHART_MIN_SECONDS)));
	hi = (int)ceil(log10(fmax(sorted[n - 1], CHART_MIN_SECONDS)));
	if (hi <= lo)
		hi = lo + 1;
	t0 = st->recent[first].at_ms;
	t1 = st->recent[(first + n - 1) % XD_SESSIONS_RECENT].at_ms;
	if (t1 - t0 < 1000)
		t1 = t0 + 1000;

	xd_buf_printf(out, "<svg id=chart role=img aria-label=\"convergence times\" "
			   "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
			   "width=\"%d\" height=\"%d\" style=\"max-width:100%%;height:auto\">\n",
		      CHART_W, CHART_H, CHART_W, CHART_H);
	for (int d = lo; d <= hi; d++) {
		double y = CHART_TOP + ph - ph * (d - lo) / (hi - lo);
		char lbl[16];

		decade_label(lbl, sizeof(lbl), d);
		xd_buf_printf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
				   "stroke=\"#d0d7de\" stroke-width=\"1\"/>"
				   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			      CHART_LEFT, CHART_W - CHART_RIGHT, y, y, CHART_LEFT - 6,
			      y + 4, lbl);
	}
	clock_label(a, sizeof(a), t0);
	clock_label(b, sizeof(b), t1);
	xd_buf_printf(out, "<text x=\"%d\" y=\"%d\">%s UTC</text>"
			   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s UTC</text>\n",
		      CHART_LEFT, CHART_H - 8, a, CHART_W - CHART_RIGHT, CHART_H - 8, b);
	xd_buf_printf(out, "<g id=points>\n");
	for (size_t i = 0; i < n; i++) {
		const struct xd_convergence_sample *s =
			&st->recent[(first + i) % XD_SESSIONS_RECENT];
		double v = fmax(s->seconds, CHART_MIN_SECONDS);
		double x = CHART_LEFT + pw * (double)(s->at_ms - t0) / (double)(t1 - t0);
		double y = CHART_TOP + ph - ph * (log10(v) - lo) / (hi - lo);
		int t = sample_type(s);

		fmt_seconds(a, sizeof(a), s->seconds);
		clock_label(when, sizeof(when), s->at_ms);
		xd_buf_printf(out, "<circle class=sample cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
				   "fill=\"%s\" fill-opacity=\"0.75\"><title>%s %s at %s UTC</title>"
				   "</circle>\n",
			      x, y, type_colour(t), type_name(t), a, when);
	}
	xd_buf_printf(out, "</g>\n</svg></section>\n");
}

/* ---------------- the page ---------------- */

struct xd_status_page *xd_status_page_new(const struct xd_admin_deps *deps,
					  bool ready)
{
	struct xd_status_page *pg = xd_calloc(1, sizeof(*pg));

	pg->deps = deps;
	pg->ready = ready;
	pg->count = xd_status_count_new(deps->sessions, row_each, pg);
	return pg;
}

static bool page_step(void *st, struct xd_http_exchange *x,
		      uint64_t deadline_ns)
{
	struct xd_status_page *pg = st;
	struct xd_buf *out = &x->out;
	const struct xd_admin_deps *deps = pg->deps;
	const struct xd_status_overview *o =
		xd_status_count_step(pg->count, deadline_ns);

	if (o == NULL)
		return false;
	xd_buf_printf(out, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
			   "<meta name=viewport content=\"width=device-width, initial-scale=1\">"
			   "<title>xdsd status</title><style>%s</style></head><body>\n",
		      css);
	header(out, deps, o, pg->ready);
	xd_buf_printf(out, "<main>\n");
	/* warnings first, above the fold */
	last_good(out, xd_reloader_laststate(deps->reloader));
	rollout_failed(out, deps->rollout, o->now_ms);
	save_failing(out, xd_reloader_laststate(deps->reloader), o->now_ms);
	snapshots(out, deps, o->now_ms);
	chart(out, xd_sessions_stats(deps->sessions));
	reloads(out, deps->reloader, o->now_ms);
	rollout(out, deps->rollout, o->now_ms);
	loads(out, deps);
	replicas(out, deps);
	/* last: the one part that grows with the fleet */
	clients(out, pg, o);
	xd_buf_printf(out, "</main></body></html>\n");
	return true;
}

static void page_free(void *st)
{
	struct xd_status_page *pg = st;

	if (pg == NULL)
		return;
	xd_status_count_free(pg->count);
	for (size_t i = 0; i < NORDER; i++)
		xd_buf_free(&pg->rows[i]);
	free(pg);
}

const struct xd_pager_page xd_status_page_pager = {page_step, page_free};
