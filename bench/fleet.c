/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct fleet (fleet.h): its clients, queues and polling threads, from
 * start to stop, and the summary line the measurements append to.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "fleet_util.h"
#include "transport/abseil.h"

void fleet_kv(struct fleet *f, const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(f->out, " %s=", key);
	va_start(ap, fmt);
	vfprintf(f->out, fmt, ap);
	va_end(ap);
}

void fleet_print(struct fleet *f)
{
	fclose(f->out);
	f->out = NULL;
	printf("%s\n", f->out_buf);
	fflush(stdout);
	free(f->out_buf);
	f->out_buf = NULL;
}

/* The whole of a PEM file, NUL-terminated; dies when it cannot. */
static char *read_pem(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (fp == NULL)
		die("%s: %s", path, strerror(errno));
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 8192;
			buf = xrealloc(buf, cap + 1);
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
	} while (n > 0);
	if (ferror(fp))
		die("%s: read error", path);
	fclose(fp);
	buf[len] = '\0';
	return buf;
}

/*
 * One set of credentials for every channel (the fleet owns it): TLS with
 * the CA that signed the server's certificate and, for mutual TLS, a
 * client certificate; else plaintext. Each channel still makes its own
 * connection and handshake (GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL).
 */
static grpc_channel_credentials *make_creds(const struct fleet_options *o)
{
	grpc_ssl_pem_key_cert_pair kp;
	grpc_channel_credentials *creds;
	char *ca, *key = NULL, *cert = NULL;

	if (o->tls_ca == NULL)
		return grpc_insecure_credentials_create();
	ca = read_pem(o->tls_ca);
	if (o->tls_cert != NULL) {
		cert = read_pem(o->tls_cert);
		key = read_pem(o->tls_key);
		kp = (grpc_ssl_pem_key_cert_pair){.private_key = key, .cert_chain = cert};
	}
	creds = grpc_ssl_credentials_create(ca, cert ? &kp : NULL, NULL, NULL);
	if (creds == NULL)
		die("cannot make TLS credentials from %s", o->tls_ca);
	free(ca);
	free(cert);
	free(key);
	return creds;
}

void fleet_start(struct fleet *f)
{
	const struct fleet_options *o = &f->opt;

	f->out = open_memstream(&f->out_buf, &f->out_len);
	if (f->out == NULL)
		die("open_memstream: %s", strerror(errno));
	fprintf(f->out, "fleet");
	if (o->label)
		fleet_kv(f, "label", "%s", o->label);
	fleet_kv(f, "mode", "%s", o->mode == SOTW ? "sotw" : "delta");
	fleet_kv(f, "clients", "%d", o->clients);
	fleet_kv(f, "transport", "%s", o->tls_ca == NULL ? "plaintext" :
		 o->tls_cert != NULL ? "mtls" : "tls");

	f->conf = (struct client_conf){
		.envoy = {
			.mode = o->mode,
			.node_prefix = o->node_prefix,
			.cluster = o->cluster,
			.features = o->features,
			.trace = o->trace,
			.t_prog = f->t_prog,
			.counters = &f->counters,
			.keep_versions = o->failover != NULL,
			.stale_versions = o->failover_stale,
		},
		.grpc_target = o->grpc_target,
		.failover_target = o->grpc_failover,
		.tls_name = o->tls_ca != NULL ? o->tls_name : NULL,
	};
	f->sources = source_set_new(o->sources);
	f->conf.sources = f->sources;
	if (o->sources > 0)
		fleet_kv(f, "sources", "%d", o->sources);

	/* A 10k-connection client serializes on abseil's deadlock-detection
	 * lock (opening 2000 streams: 5.1 s with it, 1.5 s without). */
	xd_abseil_deadlock_detection_off();
	grpc_init();
	f->conf.creds = make_creds(o);
	for (int i = 0; i < o->threads; i++) {
		f->cqs[i] = grpc_completion_queue_create_for_next(NULL);
		if (pthread_create(&f->threads[i], NULL, client_poll, f->cqs[i]) != 0)
			die("pthread_create failed");
	}
	f->clients = xcalloc((size_t)o->clients, sizeof(*f->clients));
	for (int i = 0; i < o->clients; i++)
		client_init(&f->clients[i], i, &f->conf, f->cqs[i % o->threads]);
}

void fleet_connect(struct fleet *f)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < f->opt.clients; i++) {
		if (f->opt.rate > 0) {
			uint64_t due = t0 + (uint64_t)((double)i / f->opt.rate * 1e9);
			uint64_t now = now_ns();

			if (due > now)
				sleep_ms((int)((due - now) / 1000000));
		}
		client_start(&f->clients[i]);
	}
}

void fleet_lock_all(struct fleet *f)
{
	for (int i = 0; i < f->opt.clients; i++)
		pthread_mutex_lock(&f->clients[i].mu);
}

void fleet_unlock_all(struct fleet *f)
{
	for (int i = 0; i < f->opt.clients; i++)
		pthread_mutex_unlock(&f->clients[i].mu);
}

void fleet_stop(struct fleet *f)
{
	uint64_t deadline;

	atomic_store(&f->counters.stopping, true);
	for (int i = 0; i < f->opt.clients; i++)
		client_cancel(&f->clients[i]);
	deadline = now_ns() + 30000000000ull;
	while (atomic_load(&f->counters.ops) > 0 && now_ns() < deadline)
		sleep_ms(10);
	if (atomic_load(&f->counters.ops) > 0) {
		/* not worth hanging a benchmark over */
		fprintf(stderr, "fleet: %" PRId64 " operations still pending at exit\n",
			atomic_load(&f->counters.ops));
		return;
	}
	for (int i = 0; i < f->opt.clients; i++)
		client_destroy(&f->clients[i]);
	for (int i = 0; i < f->opt.threads; i++)
		grpc_completion_queue_shutdown(f->cqs[i]);
	for (int i = 0; i < f->opt.threads; i++) {
		pthread_join(f->threads[i], NULL);
		grpc_completion_queue_destroy(f->cqs[i]);
	}
	free(f->clients);
	f->clients = NULL;
	grpc_channel_credentials_release(f->conf.creds);
	f->conf.creds = NULL;
	grpc_shutdown_blocking();
	source_set_free(f->sources);
	f->sources = NULL;
	f->conf.sources = NULL;
}
