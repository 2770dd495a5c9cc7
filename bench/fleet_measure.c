/*
 * Measurements: time until every client holds a full configuration, and
 * for each trigger, which types changed, what the fleet converged on and
 * how long each client took (fleet.c defines "converged"). The main
 * thread reads the clients' state under their mutexes, polling.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

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

static bool quiet_since(uint64_t t, uint64_t now)
{
	uint64_t last = atomic_load(&counters.last_rx);
	uint64_t q = (uint64_t)(opt.settle * 1e9);

	return now - (last > t ? last : t) >= q;
}

/* Waits until every client holds a full configuration. */
bool wait_configured(uint64_t t0)
{
	uint64_t deadline = t0 + (uint64_t)(opt.timeout * 1e9), last_print = t0;

	for (;;) {
		uint64_t now = now_ns(), done = atomic_load(&counters.configured);

		if (done + atomic_load(&counters.failed) >= (uint64_t)opt.clients &&
		    quiet_since(t0, now))
			return done == (uint64_t)opt.clients;
		if (now > deadline)
			return false;
		if (opt.verbose && now - last_print > 1000000000u) {
			fprintf(stderr, "fleet: %" PRIu64 "/%d configured, %" PRIu64 " failed\n",
				done, opt.clients, atomic_load(&counters.failed));
			last_print = now;
		}
		sleep_ms(20);
	}
}

void print_initial(uint64_t t0)
{
	uint64_t *lat = xmalloc(sizeof(uint64_t) * (size_t)opt.clients);
	uint64_t last = 0, maxb = 0;
	size_t n = 0;

	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		pthread_mutex_lock(&c->mu);
		if (c->env.t_full) {
			lat[n++] = c->env.t_full - c->env.t_begin;
			if (c->env.t_full - t0 > last)
				last = c->env.t_full - t0;
		}
		if (c->env.rx_bytes > maxb)
			maxb = c->env.rx_bytes;
		c->env.rx_base = c->env.rx_bytes;
		pthread_mutex_unlock(&c->mu);
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	kv("configured", "%zu", n);
	kv("full_all_ms", "%.1f", (double)last / 1e6);
	kv("full_p50_ms", "%.1f", pct_ms(lat, n, 50));
	kv("full_p99_ms", "%.1f", pct_ms(lat, n, 99));
	kv("full_max_ms", "%.1f", pct_ms(lat, n, 100));
	uint64_t b = atomic_load(&counters.rx_bytes);

	kv("init_rx_bytes", "%" PRIu64, b);
	kv("init_rx_bytes_per_client", "%" PRIu64, b / (uint64_t)opt.clients);
	kv("init_rx_bytes_max", "%" PRIu64, maxb);
	kv("init_responses", "%" PRIu64, atomic_load(&counters.rx_msgs));
	free(lat);
}

struct vote {
	uint64_t state;
	size_t count;
};

/* The most common ack_state of type t among live clients. */
static struct vote majority(enum rt t)
{
	struct vote v = {0, 0};
	size_t count = 0, live = 0;

	/* Boyer-Moore, then a count of the candidate */
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		if (c->dead)
			continue;
		if (count == 0) {
			v.state = c->env.t[t].ack_state;
			count = 1;
		} else if (c->env.t[t].ack_state == v.state) {
			count++;
		} else {
			count--;
		}
	}
	for (int i = 0; i < opt.clients; i++)
		if (!clients[i].dead) {
			live++;
			if (clients[i].env.t[t].ack_state == v.state)
				v.count++;
		}
	(void)live;
	return v;
}

struct eval {
	bool changed[NT];
	uint64_t expect[NT];
	size_t converged;
	bool any_unacked;
};

/* Called with every client locked. */
static void evaluate(struct eval *ev)
{
	memset(ev, 0, sizeof(*ev));
	for (int t = 0; t < NT; t++) {
		struct vote v = majority((enum rt)t);

		ev->expect[t] = v.state;
		for (int i = 0; i < opt.clients; i++)
			if (!clients[i].dead &&
			    clients[i].env.t[t].ack_state != clients[i].env.t[t].base_state)
				ev->changed[t] = true;
	}
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];
		bool ok = !c->dead;

		for (int t = 0; t < NT && ok; t++) {
			if (c->env.t[t].unacked)
				ev->any_unacked = true;
			if (ev->changed[t] &&
			    (c->env.t[t].ack_state != ev->expect[t] || c->env.t[t].unacked))
				ok = false;
		}
		if (ok)
			ev->converged++;
	}
}

static void lock_all(void)
{
	for (int i = 0; i < opt.clients; i++)
		pthread_mutex_lock(&clients[i].mu);
}

static void unlock_all(void)
{
	for (int i = 0; i < opt.clients; i++)
		pthread_mutex_unlock(&clients[i].mu);
}

/* Runs trigger k and measures the convergence that follows. */
bool run_trigger(int k)
{
	char p[16];
	uint64_t resp0[NT], dup0[NT], rx0, t0, deadline, *lat;
	double cpu0, cpu1;
	struct eval ev;
	bool ok = false;
	int rc;

	snprintf(p, sizeof(p), "u%d_", k + 1);
	lock_all();
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		for (int t = 0; t < NT; t++)
			c->env.t[t].base_state = c->env.t[t].ack_state;
		c->env.rx_base = c->env.rx_bytes;
	}
	for (int t = 0; t < NT; t++) {
		resp0[t] = atomic_load(&counters.resp[t]);
		dup0[t] = atomic_load(&counters.dups[t]);
	}
	rx0 = atomic_load(&counters.rx_bytes);
	unlock_all();

	cpu0 = proc_cpu_s(opt.server_pid);
	t0 = now_ns();
	if (opt.verbose)
		fprintf(stderr, "fleet: trigger %d: %s\n", k + 1, opt.trigger[k]);
	rc = system(opt.trigger[k]);
	if (rc != 0) {
		fprintf(stderr, "fleet: trigger %d failed (status %d): %s\n",
			k + 1, rc, opt.trigger[k]);
		kv("u_error", "trigger%d", k + 1);
		return false;
	}
	deadline = t0 + (uint64_t)(opt.timeout * 1e9);
	for (;;) {
		uint64_t now = now_ns();
		bool any = false;

		lock_all();
		evaluate(&ev);
		unlock_all();
		for (int t = 0; t < NT; t++)
			any |= ev.changed[t];
		if (any && ev.converged == (size_t)opt.clients &&
		    quiet_since(t0, now)) {
			ok = true;
			break;
		}
		if (now > deadline)
			break;
		sleep_ms(50);
	}
	cpu1 = proc_cpu_s(opt.server_pid);

	/* figures */
	lat = xmalloc(sizeof(uint64_t) * (size_t)opt.clients);
	size_t n = 0;
	uint64_t maxb = 0;
	char changed[64] = "", key[64];

	lock_all();
	for (int t = 0; t < NT; t++)
		if (ev.changed[t]) {
			if (*changed)
				strcat(changed, ",");
			strcat(changed, type_name[t]);
		}
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];
		uint64_t worst = 0;
		bool good = !c->dead;

		for (int t = 0; t < NT && good; t++) {
			if (!ev.changed[t])
				continue;
			if (c->env.t[t].ack_state != ev.expect[t] || c->env.t[t].unacked)
				good = false;
			else if (c->env.t[t].ack_at > t0 && c->env.t[t].ack_at - t0 > worst)
				worst = c->env.t[t].ack_at - t0;
		}
		if (good)
			lat[n++] = worst;
		if (c->env.rx_bytes - c->env.rx_base > maxb)
			maxb = c->env.rx_bytes - c->env.rx_base;
	}
	unlock_all();
	qsort(lat, n, sizeof(*lat), cmp_u64);

#define KEY(s) (snprintf(key, sizeof(key), "%s%s", p, s), key)
	kv(KEY("changed"), "%s", *changed ? changed : "none");
	kv(KEY("converged"), "%zu", n);
	kv(KEY("conv_p50_ms"), "%.1f", pct_ms(lat, n, 50));
	kv(KEY("conv_p99_ms"), "%.1f", pct_ms(lat, n, 99));
	kv(KEY("conv_max_ms"), "%.1f", pct_ms(lat, n, 100));
	uint64_t b = atomic_load(&counters.rx_bytes) - rx0;

	kv(KEY("rx_bytes"), "%" PRIu64, b);
	kv(KEY("rx_bytes_per_client"), "%" PRIu64, b / (uint64_t)opt.clients);
	kv(KEY("rx_bytes_max"), "%" PRIu64, maxb);
	kv(KEY("responses"), "cds:%" PRIu64 "/eds:%" PRIu64 "/lds:%" PRIu64 "/rds:%" PRIu64,
	   atomic_load(&counters.resp[CDS]) - resp0[CDS],
	   atomic_load(&counters.resp[EDS]) - resp0[EDS],
	   atomic_load(&counters.resp[LDS]) - resp0[LDS],
	   atomic_load(&counters.resp[RDS]) - resp0[RDS]);
	kv(KEY("dups"), "cds:%" PRIu64 "/eds:%" PRIu64 "/lds:%" PRIu64 "/rds:%" PRIu64,
	   atomic_load(&counters.dups[CDS]) - dup0[CDS],
	   atomic_load(&counters.dups[EDS]) - dup0[EDS],
	   atomic_load(&counters.dups[LDS]) - dup0[LDS],
	   atomic_load(&counters.dups[RDS]) - dup0[RDS]);
	if (cpu0 >= 0 && cpu1 >= 0)
		kv(KEY("server_cpu_ms"), "%.0f", (cpu1 - cpu0) * 1000);
#undef KEY
	free(lat);
	if (!ok)
		fprintf(stderr, "fleet: trigger %d: %zu of %d clients converged "
			"within %.0f s (changed: %s)\n", k + 1, n, opt.clients,
			opt.timeout, *changed ? changed : "nothing");
	return ok;
}
