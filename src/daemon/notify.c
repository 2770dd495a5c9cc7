/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/notify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "util/clock.h"
#include "util/common.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* Bytes of a reload's first error that STATUS= shows. */
#define STATUS_ERROR_MAX 200

struct xd_notify {
	uv_timer_t status_timer, watchdog_timer;
	unsigned open_handles; /* freed when both have closed */
	uint64_t watchdog_ms;
	const struct xd_cache *cache;
	struct xd_sessions *sessions;
	const struct xd_reloader *reloader;
	const struct xd_rollout *rollout; /* NULL: no `rollout:` */
	bool ready; /* READY=1 was sent: the start is over */
};

/* 1234567 as "1,234,567": figures an operator reads at a glance. */
static void thousands(char *out, size_t len, size_t v)
{
	char digits[32];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%zu", v), o = 0;

	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

/* "12 s", "5 min", "3 h", "2 d" ago: coarse as a status line needs. */
static void age(char *out, size_t len, int64_t ms)
{
	int64_t s = ms < 0 ? 0 : ms / 1000;

	if (s < 120)
		snprintf(out, len, "%" PRId64 " s", s);
	else if (s < 120 * 60)
		snprintf(out, len, "%" PRId64 " min", s / 60);
	else if (s < 48 * 3600)
		snprintf(out, len, "%" PRId64 " h", s / 3600);
	else
		snprintf(out, len, "%" PRId64 " d", s / 86400);
}

void xd_notify_format(char *out, size_t len, size_t snapshots,
		      size_t streams, bool reloading,
		      const struct xd_reload_record *rec, int64_t now_ms)
{
	char snaps[32], strs[32], ago[32], err[STATUS_ERROR_MAX * 4 + 1];
	size_t n;

	thousands(snaps, sizeof(snaps), snapshots);
	thousands(strs, sizeof(strs), streams);
	n = (size_t)snprintf(out, len, "serving %s snapshot%s to %s stream%s",
			     snaps, snapshots == 1 ? "" : "s", strs,
			     streams == 1 ? "" : "s");
	if (n >= len)
		return;
	if (reloading) {
		snprintf(out + n, len - n, "; reloading");
		return;
	}
	if (rec == NULL)
		return;
	age(ago, sizeof(ago), now_ms - rec->at_ms);
	if (strcmp(rec->trigger, "start-up") == 0) {
		snprintf(out + n, len - n, "; loaded at start-up %s ago", ago);
	} else if (rec->ok) {
		snprintf(out + n, len - n, "; last reload ok %s ago", ago);
	} else {
		/* STATUS= is one line: the error's own control characters
		 * (from a file) are escaped as in the log. */
		err[0] = '\0';
		if (rec->nkept > 0)
			xd_log_escape(err, sizeof(err), rec->errors[0],
				      strnlen(rec->errors[0], STATUS_ERROR_MAX));
		snprintf(out + n, len - n, "; last reload FAILED %s ago%s%s",
			 ago, err[0] != '\0' ? ": " : "", err);
	}
}

/* Serving the last good state comes first, where `systemctl status`
 * cannot cut it off: what is served is not what is on disk. */
static size_t last_good(char *out, size_t len, const struct xd_reloader *r)
{
	const struct xd_laststate *s = xd_reloader_laststate(r);
	const struct xd_laststate_info *i;
	char when[32];
	int k;

	if (s == NULL || !(i = xd_laststate_info(s))->serving)
		return 0;
	xd_jw_time(when, i->served_saved_at_ms);
	k = snprintf(out, len, "SERVING THE LAST GOOD STATE saved %s: the snapshots are refused (%zu error%s); ",
		     when, i->nerrors, i->nerrors == 1 ? "" : "s");
	return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

/* A rollout under way, or the last one failed, comes next: what
 * canaries are served is not what everyone is, or the files on disk
 * are not what is served. */
static size_t rollout_text(char *out, size_t len, const struct xd_rollout *ro)
{
	const struct xd_rollout_status *st;
	char ago[32], reason[STATUS_ERROR_MAX * 4 + 1];
	int k;

	if (ro == NULL)
		return 0;
	st = xd_rollout_status(ro);
	if (xd_rollout_active(ro) && st->canaries == 0) {
		k = snprintf(out, len, "rollout %llu %s with NO CANARY connected; ",
			     (unsigned long long)st->id,
			     xd_rollout_state_name(st->state));
	} else if (xd_rollout_active(ro)) {
		k = snprintf(out, len, "rollout %llu %s: %zu of %zu canar%s answered; ",
			     (unsigned long long)st->id,
			     xd_rollout_state_name(st->state), st->answered,
			     st->canaries, st->canaries == 1 ? "y" : "ies");
	} else if (st->state == XD_ROLLOUT_FAILED) {
		age(ago, sizeof(ago), xd_wall_ms() - st->ended_ms);
		xd_log_escape(reason, sizeof(reason), st->reason,
			      strnlen(st->reason, STATUS_ERROR_MAX));
		k = snprintf(out, len, "ROLLOUT %llu FAILED %s ago, rolled back: %s; ",
			     (unsigned long long)st->id, ago, reason);
	} else {
		return 0;
	}
	return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

void xd_notify_status(struct xd_notify *n, const char *extra)
{
	const struct xd_reload_record *rec = NULL;
	char status[1024], extend[64];
	size_t k;

	if (n == NULL)
		return;
	XD_ASSERT_LOOP(); /* the sessions' and the reloader's state */
	if (extra != NULL && strstr(extra, "READY=1") != NULL)
		n->ready = true;
	if (xd_reload_history_count(n->reloader) > 0)
		rec = xd_reload_history(n->reloader, 0);
	k = last_good(status, sizeof(status), n->reloader);
	k += rollout_text(status + k, sizeof(status) - k, n->rollout);
	xd_notify_format(status + k, sizeof(status) - k,
			 xd_cache_count(n->cache),
			 n->sessions != NULL ?
				 xd_sessions_stats(n->sessions)->sessions :
				 0,
			 xd_reloader_busy(n->reloader), rec, xd_wall_ms());
	extend[0] = '\0';
	if (!n->ready)
		snprintf(extend, sizeof(extend), "EXTEND_TIMEOUT_USEC=%llu\n",
			 (unsigned long long)XD_NOTIFY_START_EXTEND_MS * 1000);
	sd_notifyf(0, "%s%s%sSTATUS=%s", extra != NULL ? extra : "",
		   extra != NULL ? "\n" : "", extend, status);
}

static void on_status_timer(uv_timer_t *t)
{
	xd_notify_status(t->data, NULL);
}

static void on_watchdog_timer(uv_timer_t *t XD_UNUSED)
{
	/* the keepalive says the loop turns: from any other thread it
	 * would keep a stuck daemon alive */
	XD_ASSERT_LOOP();
	sd_notify(0, "WATCHDOG=1");
}

struct xd_notify *xd_notify_start(uv_loop_t *loop,
				  const struct xd_cache *cache,
				  struct xd_sessions *sessions,
				  const struct xd_reloader *reloader,
				  const struct xd_rollout *rollout)
{
	struct xd_notify *n;
	uint64_t usec = 0;
	const char *sock = getenv("NOTIFY_SOCKET");

	if (sock == NULL || sock[0] == '\0')
		return NULL;
	n = xd_calloc(1, sizeof(*n));
	n->cache = cache;
	n->sessions = sessions;
	n->reloader = reloader;
	n->rollout = rollout;
	uv_timer_init(loop, &n->status_timer);
	uv_timer_init(loop, &n->watchdog_timer);
	n->open_handles = 2;
	n->status_timer.data = n;
	n->watchdog_timer.data = n;
	/* Neither timer may keep a loop that has nothing else to do. */
	uv_unref((uv_handle_t *)&n->status_timer);
	uv_unref((uv_handle_t *)&n->watchdog_timer);
	uv_timer_start(&n->status_timer, on_status_timer, XD_NOTIFY_STATUS_MS,
		       XD_NOTIFY_STATUS_MS);
	/* > 0: WATCHDOG_USEC is set and WATCHDOG_PID, if set, is ours. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		n->watchdog_ms = usec / 2000 > 0 ? usec / 2000 : 1;
		uv_timer_start(&n->watchdog_timer, on_watchdog_timer,
			       n->watchdog_ms, n->watchdog_ms);
		xd_info("systemd watchdog: %" PRIu64 " ms, keepalive every %" PRIu64 " ms",
			usec / 1000, n->watchdog_ms);
	}
	return n;
}

uint64_t xd_notify_watchdog_ms(const struct xd_notify *n)
{
	return n != NULL ? n->watchdog_ms : 0;
}

static void closed(uv_handle_t *h)
{
	struct xd_notify *n = h->data;

	if (XD_UNREF(n->open_handles))
		free(n);
}

void xd_notify_stop(struct xd_notify *n)
{
	if (n == NULL)
		return;
	n->sessions = NULL;
	uv_close((uv_handle_t *)&n->status_timer, closed);
	uv_close((uv_handle_t *)&n->watchdog_timer, closed);
}
