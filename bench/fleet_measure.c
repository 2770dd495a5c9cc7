/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The figures of each phase of a run (fleet_measure.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_measure.h"
#include "fleet_proc.h"
#include "fleet_util.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n), in ms. */
static double pct_ms(const uint64_t *v, size_t n, double p)
{
	size_t k;

	if (n == 0)
		return -1;
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e6;
}

/* --settle seconds have passed since t and since the last message. */
static bool quiet_since(struct fleet *f, uint64_t t, uint64_t now)
{
	uint64_t last = atomic_load(&f->counters.last_rx);
	uint64_t q = (uint64_t)(f->opt.settle * 1e9);

	return now - (last > t ? last : t) >= q;
}

bool measure_wait_configured(struct fleet *f, uint64_t t0)
{
	const struct fleet_options *o = &f->opt;
	uint64_t deadline = t0 + (uint64_t)(o->timeout * 1e9), last_print = t0;

	for (;;) {
		uint64_t now = now_ns(), done = atomic_load(&f->counters.configured);

		if (done + atomic_load(&f->counters.failed) >= (uint64_t)o->clients &&
		    quiet_since(f, t0, now))
			return done == (uint64_t)o->clients;
		if (now > deadline)
			return false;
		if (o->verbose && now - last_print > 1000000000u) {
			fprintf(stderr, "fleet: %" PRIu64 "/%d configured, %" PRIu64 " failed\n",
				done, o->clients, atomic_load(&f->counters.failed));
			last_print = now;
		}
		sleep_ms(20);
	}
}

void measure_initial(struct fleet *f, uint64_t t0)
{
	uint64_t *lat = xmalloc(sizeof(uint64_t) * (size_t)f->opt.clients);
	uint64_t last = 0, maxb = 0;
	size_t n = 0;

	for (int i = 0; i < f->opt.clients; i++) {
		struct client *c = &f->clients[i];
		struct envoy *e = &c->env;

		pthread_mutex_lock(&c->mu);
		if (e->t_full) {
			lat[n++] = e->t_full - e->t_begin;
			if (e->t_full - t0 > last)
				last = e->t_full - t0;
		}
		if (e->rx_bytes > maxb)
			maxb = e->rx_bytes;
		e->rx_base = e->rx_bytes;
		pthread_mutex_unlock(&c->mu);
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	fleet_kv(f, "configured", "%zu", n);
	fleet_kv(f, "full_all_ms", "%.1f", (double)last / 1e6);
	fleet_kv(f, "full_p50_ms", "%.1f", pct_ms(lat, n, 50));
	fleet_kv(f, "full_p99_ms", "%.1f", pct_ms(lat, n, 99));
	fleet_kv(f, "full_max_ms", "%.1f", pct_ms(lat, n, 100));
	uint64_t b = atomic_load(&f->counters.rx_bytes);

	fleet_kv(f, "init_rx_bytes", "%" PRIu64, b);
	fleet_kv(f, "init_rx_bytes_per_client", "%" PRIu64, b / (uint64_t)f->opt.clients);
	fleet_kv(f, "init_rx_bytes_max", "%" PRIu64, maxb);
	fleet_kv(f, "init_responses", "%" PRIu64, atomic_load(&f->counters.rx_msgs));
	free(lat);
}

/* The most common ack_state of type t among live clients (Boyer-Moore
 * majority vote: the majority, when there is one). */
static uint64_t majority(const struct fleet *f, enum rt t)
{
	uint64_t state = 0;
	size_t count = 0;

	for (int i = 0; i < f->opt.clients; i++) {
		const struct client *c = &f->clients[i];

		if (c->dead)
			continue;
		if (count == 0) {
			state = c->env.t[t].ack_state;
			count = 1;
		} else if (c->env.t[t].ack_state == state) {
			count++;
		} else {
			count--;
		}
	}
	return state;
}

struct eval {
	bool changed[NT];
	uint64_t expect[NT];
	size_t converged;
};

/* Called with every client locked. */
static void evaluate(const struct fleet *f, struct eval *ev)
{
	memset(ev, 0, sizeof(*ev));
	for (int t = 0; t < NT; t++) {
		ev->expect[t] = majority(f, (enum rt)t);
		for (int i = 0; i < f->opt.clients; i++) {
			const struct client *c = &f->clients[i];

			if (!c->dead && c->env.t[t].ack_state != c->env.t[t].base_state)
				ev->changed[t] = true;
		}
	}
	for (int i = 0; i < f->opt.clients; i++) {
		const struct client *c = &f->clients[i];
		const struct tstate *ts = c->env.t;
		bool ok = !c->dead;

		for (int t = 0; t < NT && ok; t++)
			if (ev->changed[t] &&
			    (ts[t].ack_state != ev->expect[t] || ts[t].unacked))
				ok = false;
		if (ok)
			ev->converged++;
	}
}

/* Runs trigger k; when it fails, says so and adds `error_key`=. */
static bool run_trigger(struct fleet *f, int k, const char *error_key)
{
	int rc;

	if (f->opt.verbose)
		fprintf(stderr, "fleet: trigger %d: %s\n", k + 1, f->opt.trigger[k]);
	rc = system(f->opt.trigger[k]);
	if (rc != 0) {
		fprintf(stderr, "fleet: trigger %d failed (status %d): %s\n",
			k + 1, rc, f->opt.trigger[k]);
		fleet_kv(f, error_key, "trigger%d", k + 1);
		return false;
	}
	return true;
}

bool measure_trigger(struct fleet *f, int k)
{
	const struct fleet_options *o = &f->opt;
	struct fleet_counters *cnt = &f->counters;
	char p[16];
	uint64_t resp0[NT], dup0[NT], rx0, t0, deadline, *lat;
	double cpu0, cpu1;
	struct eval ev;
	bool ok = false;

	snprintf(p, sizeof(p), "u%d_", k + 1);
	fleet_lock_all(f);
	for (int i = 0; i < o->clients; i++) {
		struct envoy *e = &f->clients[i].env;

		for (int t = 0; t < NT; t++)
			e->t[t].base_state = e->t[t].ack_state;
		e->rx_base = e->rx_bytes;
	}
	for (int t = 0; t < NT; t++) {
		resp0[t] = atomic_load(&cnt->resp[t]);
		dup0[t] = atomic_load(&cnt->dups[t]);
	}
	rx0 = atomic_load(&cnt->rx_bytes);
	fleet_unlock_all(f);

	cpu0 = proc_cpu_s(o->server_pid);
	t0 = now_ns();
	if (!run_trigger(f, k, "u_error"))
		return false;
	deadline = t0 + (uint64_t)(o->timeout * 1e9);
	for (;;) {
		uint64_t now = now_ns();
		bool any = false;

		fleet_lock_all(f);
		evaluate(f, &ev);
		fleet_unlock_all(f);
		for (int t = 0; t < NT; t++)
			any |= ev.changed[t];
		if (any && ev.converged == (size_t)o->clients &&
		    quiet_since(f, t0, now)) {
			ok = true;
			break;
		}
		if (now > deadline)
			break;
		sleep_ms(50);
	}
	cpu1 = proc_cpu_s(o->server_pid);

	/* figures */
	lat = xmalloc(sizeof(uint64_t) * (size_t)o->clients);
	size_t n = 0;
	uint64_t maxb = 0;
	char changed[64] = "", key[64];

	fleet_lock_all(f);
	for (int t = 0; t < NT; t++)
		if (ev.changed[t]) {
			if (*changed)
				strcat(changed, ",");
			strcat(changed, type_name[t]);
		}
	for (int i = 0; i < o->clients; i++) {
		const struct client *c = &f->clients[i];
		const struct envoy *e = &c->env;
		uint64_t worst = 0;
		bool good = !c->dead;

		for (int t = 0; t < NT && good; t++) {
			if (!ev.changed[t])
				continue;
			if (e->t[t].ack_state != ev.expect[t] || e->t[t].unacked)
				good = false;
			else if (e->t[t].ack_at > t0 && e->t[t].ack_at - t0 > worst)
				worst = e->t[t].ack_at - t0;
		}
		if (good)
			lat[n++] = worst;
		if (e->rx_bytes - e->rx_base > maxb)
			maxb = e->rx_bytes - e->rx_base;
	}
	fleet_unlock_all(f);
	qsort(lat, n, sizeof(*lat), cmp_u64);

#define KEY(s) (snprintf(key, sizeof(key), "%s%s", p, s), key)
	fleet_kv(f, KEY("changed"), "%s", *changed ? changed : "none");
	fleet_kv(f, KEY("converged"), "%zu", n);
	fleet_kv(f, KEY("conv_p50_ms"), "%.1f", pct_ms(lat, n, 50));
	fleet_kv(f, KEY("conv_p99_ms"), "%.1f", pct_ms(lat, n, 99));
	fleet_kv(f, KEY("conv_max_ms"), "%.1f", pct_ms(lat, n, 100));
	uint64_t b = atomic_load(&cnt->rx_bytes) - rx0;

	fleet_kv(f, KEY("rx_bytes"), "%" PRIu64, b);
	fleet_kv(f, KEY("rx_bytes_per_client"), "%" PRIu64, b / (uint64_t)o->clients);
	fleet_kv(f, KEY("rx_bytes_max"), "%" PRIu64, maxb);
	/* LEDS last: the four before it as they were printed before it */
	fleet_kv(f, KEY("responses"),
		 "cds:%" PRIu64 "/eds:%" PRIu64 "/lds:%" PRIu64 "/rds:%" PRIu64
		 "/leds:%" PRIu64,
		 atomic_load(&cnt->resp[CDS]) - resp0[CDS],
		 atomic_load(&cnt->resp[EDS]) - resp0[EDS],
		 atomic_load(&cnt->resp[LDS]) - resp0[LDS],
		 atomic_load(&cnt->resp[RDS]) - resp0[RDS],
		 atomic_load(&cnt->resp[LEDS]) - resp0[LEDS]);
	fleet_kv(f, KEY("dups"),
		 "cds:%" PRIu64 "/eds:%" PRIu64 "/lds:%" PRIu64 "/rds:%" PRIu64
		 "/leds:%" PRIu64,
		 atomic_load(&cnt->dups[CDS]) - dup0[CDS],
		 atomic_load(&cnt->dups[EDS]) - dup0[EDS],
		 atomic_load(&cnt->dups[LDS]) - dup0[LDS],
		 atomic_load(&cnt->dups[RDS]) - dup0[RDS],
		 atomic_load(&cnt->dups[LEDS]) - dup0[LEDS]);
	if (cpu0 >= 0 && cpu1 >= 0)
		fleet_kv(f, KEY("server_cpu_ms"), "%.0f", (cpu1 - cpu0) * 1000);
#undef KEY
	free(lat);
	if (!ok)
		fprintf(stderr, "fleet: trigger %d: %zu of %d clients converged "
			"within %.0f s (changed: %s)\n", k + 1, n, o->clients,
			o->timeout, *changed ? changed : "nothing");
	return ok;
}

/* True when no live client has a request due, one in flight or a
 * response un-ACKed, nor waits for resources the server owes it. */
static bool fleet_idle(struct fleet *f)
{
	bool idle = true;

	fleet_lock_all(f);
	for (int i = 0; i < f->opt.clients && idle; i++) {
		const struct client *c = &f->clients[i];

		if (!c->dead && (c->send_busy || c->reopen_due || envoy_busy(&c->env) ||
				 c->env.resent < c->env.resent_due))
			idle = false;
	}
	fleet_unlock_all(f);
	return idle;
}

bool measure_failover(struct fleet *f, int k)
{
	const struct fleet_options *o = &f->opt;
	struct fleet_counters *cnt = &f->counters;
	uint64_t rx0 = atomic_load(&cnt->rx_bytes), msgs0 = atomic_load(&cnt->rx_msgs);
	uint64_t t0, deadline, t_back = 0, busy_until, *lat, due = 0;
	double cpu0 = proc_cpu_s(o->server_pid), cpu_last = cpu0, cpu1;
	bool ok = false;
	size_t n = 0;

	t0 = busy_until = now_ns();
	if (!run_trigger(f, k, "storm_error"))
		return false;
	deadline = t0 + (uint64_t)(o->timeout * 1e9);
	for (;;) {
		uint64_t now = now_ns();
		/* the server's CPU time moves in clock ticks: it was busy
		 * until the last sample that saw it move */
		double cpu = proc_cpu_s(o->server_pid);

		if (cpu > cpu_last) {
			cpu_last = cpu;
			busy_until = now;
		}
		if (t_back == 0 && atomic_load(&cnt->resumed) + atomic_load(&cnt->failed) >=
		    (uint64_t)o->clients)
			t_back = now;
		/* nothing owed to a client may still be on its way: the
		 * server, too, has been idle for --settle */
		if (t_back && quiet_since(f, t_back, now) &&
		    quiet_since(f, busy_until, now) && fleet_idle(f)) {
			ok = atomic_load(&cnt->failed) == 0;
			break;
		}
		if (now > deadline)
			break;
		if (o->verbose && (now - t0) / 1000000000u != (now + 20000000u - t0) / 1000000000u)
			fprintf(stderr, "fleet: %" PRIu64 "/%d back, %" PRIu64 " failed\n",
				atomic_load(&cnt->resumed), o->clients, atomic_load(&cnt->failed));
		sleep_ms(20);
	}
	cpu1 = proc_cpu_s(o->server_pid);

	lat = xmalloc(sizeof(uint64_t) * (size_t)o->clients);
	fleet_lock_all(f);
	for (int i = 0; i < o->clients; i++) {
		const struct client *c = &f->clients[i];

		if (c->resumed)
			lat[n++] = c->env.t_last_tx - t0;
		due += c->env.resent_due;
	}
	fleet_unlock_all(f);
	qsort(lat, n, sizeof(*lat), cmp_u64);
	fleet_kv(f, "storm_versions", "%s", o->failover_stale ? "altered" : "held");
	fleet_kv(f, "storm_reopened", "%" PRIu64, atomic_load(&cnt->reconnects));
	fleet_kv(f, "storm_retried", "%" PRIu64, atomic_load(&cnt->retries));
	fleet_kv(f, "storm_back", "%zu", n);
	fleet_kv(f, "storm_settled_p50_ms", "%.1f", pct_ms(lat, n, 50));
	fleet_kv(f, "storm_settled_p99_ms", "%.1f", pct_ms(lat, n, 99));
	fleet_kv(f, "storm_settled_all_ms", "%.1f", pct_ms(lat, n, 100));
	fleet_kv(f, "storm_resources_sent", "%" PRIu64, atomic_load(&cnt->resent));
	fleet_kv(f, "storm_resources_owed", "%" PRIu64, due);
	fleet_kv(f, "storm_responses", "%" PRIu64, atomic_load(&cnt->rx_msgs) - msgs0);
	fleet_kv(f, "storm_rx_bytes", "%" PRIu64, atomic_load(&cnt->rx_bytes) - rx0);
	if (cpu0 >= 0 && cpu1 >= 0) {
		fleet_kv(f, "storm_server_cpu_ms", "%.0f", (cpu1 - cpu0) * 1000);
		fleet_kv(f, "storm_server_busy_ms", "%.0f", (double)(busy_until - t0) / 1e6);
	}
	free(lat);
	if (!ok)
		fprintf(stderr, "fleet: trigger %d: %zu of %d clients back and settled within "
			"%.0f s, %" PRIu64 " streams failed\n", k + 1, n, o->clients, o->timeout,
			atomic_load(&cnt->failed));
	return ok;
}

void measure_hold(struct fleet *f)
{
	const struct fleet_options *o = &f->opt;
	uint64_t m0 = atomic_load(&f->counters.rx_msgs);
	uint64_t h0 = atomic_load(&f->counters.heartbeats);
	double c0 = proc_cpu_s(o->server_pid), c1;
	long s0 = proc_switches(o->server_pid), s1;

	if (o->verbose)
		fprintf(stderr, "fleet: holding %d idle streams for %.0f s\n",
			o->clients, o->hold);
	sleep_ms((int)(o->hold * 1000));
	c1 = proc_cpu_s(o->server_pid);
	s1 = proc_switches(o->server_pid);
	fleet_kv(f, "hold_s", "%.0f", o->hold);
	fleet_kv(f, "hold_responses", "%" PRIu64,
		 atomic_load(&f->counters.rx_msgs) - m0);
	fleet_kv(f, "hold_heartbeats", "%" PRIu64,
		 atomic_load(&f->counters.heartbeats) - h0);
	if (c0 >= 0 && c1 >= 0) {
		fleet_kv(f, "hold_server_cpu_pct", "%.3f", 100 * (c1 - c0) / o->hold);
		fleet_kv(f, "hold_server_wakeups_per_s", "%.1f",
			 (double)(s1 - s0) / o->hold);
		fleet_kv(f, "hold_rss_kb", "%ld",
			 proc_status_kb(o->server_pid, "VmRSS"));
	}
}
