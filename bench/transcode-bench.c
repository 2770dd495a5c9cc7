/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How fast a large snapshot file becomes encoded resources.
 *
 * Generates (or reads) a snapshot of the size docs/design.md §3 plans for --
 * 10,000 clusters, 10,000 ClusterLoadAssignments of 10 endpoints, one
 * listener, one route configuration of 10,000 virtual hosts (~15 MB of
 * YAML) -- and times, best of --runs, in elapsed and process CPU time:
 *
 *   libyaml events   yaml_parser_parse over the file, nothing else
 *                    (the floor for any YAML reader)
 *   libyaml document yaml_parser_load (the tree libyaml builds itself)
 *   transcode        xd_transcode_yaml_file: parse, trees, encoding
 *   transcode x N    the same with N threads (--threads, default 2):
 *                    the file is cut into pieces between list items
 *
 * usage: transcode-bench [--schema xds-api.pb] [--file F | --write F]
 *                        [--runs N] [--threads N]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "config/paths_gen.h" /* XD_BUILD_DIR */
#include "schema/schema.h"
#include "schema/transcode.h"
#include "snapshot/annotations.h"
#include "util/buf.h"

#define NCLUSTERS 10000
#define NENDPOINTS 10
#define NVHOSTS 10000

static void generate(struct xd_buf *b)
{
	xd_buf_printf(b, "clusters:\n");
	for (int i = 0; i < NCLUSTERS; i++)
		xd_buf_printf(b,
			"- name: service-%05d\n"
			"  type: EDS\n"
			"  connect_timeout: 0.25s\n"
			"  lb_policy: LEAST_REQUEST\n"
			"  eds_cluster_config:\n"
			"    service_name: service-%05d\n"
			"    eds_config:\n"
			"      ads: {}\n"
			"      resource_api_version: V3\n"
			"  circuit_breakers:\n"
			"    thresholds:\n"
			"    - max_connections: 1024\n"
			"      max_requests: 4096\n"
			"  health_checks:\n"
			"  - timeout: 1s\n"
			"    interval: 10s\n"
			"    http_health_check:\n"
			"      path: /healthz\n",
			i, i);
	xd_buf_printf(b, "endpoints:\n");
	for (int i = 0; i < NCLUSTERS; i++) {
		xd_buf_printf(b,
			"- cluster_name: service-%05d\n"
			"  endpoints:\n"
			"  - locality:\n"
			"      region: eu-west-1\n"
			"      zone: eu-west-1%c\n"
			"    lb_endpoints:\n",
			i, 'a' + i % 3);
		for (int j = 0; j < NENDPOINTS; j++)
			xd_buf_printf(b,
				"    - endpoint: {address: {socket_address: {address: 10.%d.%d.%d, port_value: 8080}}}\n",
				i / 256 % 256, i % 256, j + 1);
	}
	xd_buf_printf(b,
		"listeners:\n"
		"- name: ingress\n"
		"  address:\n"
		"    socket_address: {address: 0.0.0.0, port_value: 8080}\n"
		"  filter_chains:\n"
		"  - filters:\n"
		"    - name: envoy.filters.network.http_connection_manager\n"
		"      typed_config:\n"
		"        \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
		"        stat_prefix: ingress\n"
		"        rds:\n"
		"          route_config_name: ingress\n"
		"          config_source: {ads: {}, resource_api_version: V3}\n"
		"        http_filters:\n"
		"        - name: envoy.filters.http.router\n"
		"          typed_config:\n"
		"            \"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\n");
	xd_buf_printf(b, "routes:\n- name: ingress\n  virtual_hosts:\n");
	for (int i = 0; i < NVHOSTS; i++)
		xd_buf_printf(b,
			"  - name: vhost-%05d\n"
			"    domains: [\"service-%05d.example.com\", \"service-%05d\"]\n"
			"    routes:\n"
			"    - match: {prefix: /api}\n"
			"      route:\n"
			"        cluster: service-%05d\n"
			"        timeout: 15s\n"
			"        retry_policy: {retry_on: 5xx, num_retries: 2}\n"
			"    - match: {prefix: /}\n"
			"      route: {cluster: service-%05d}\n",
			i, i, i, i, i);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of the whole process: on a busy machine, a steadier figure
 * than the elapsed time. */
static double cpu(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

struct best {
	double wall, cpu;
};

static void keep(struct best *b, double wall, double c)
{
	if (wall < b->wall)
		b->wall = wall;
	if (c < b->cpu)
		b->cpu = c;
}

static double events_only(const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	double t0 = now();
	int done = 0;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			fprintf(stderr, "yaml error\n");
			exit(1);
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return now() - t0;
}

static double document(const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_document_t doc;
	double t0 = now();

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		fprintf(stderr, "yaml error\n");
		exit(1);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return now() - t0;
}

struct totals {
	size_t items, bytes;
};

static int count(const struct xd_item *it, void *arg)
{
	struct totals *t = arg;

	t->items++;
	t->bytes += it->len;
	return 0;
}

static struct xd_section sections[4];

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"schema", required_argument, NULL, 's'},
		{"file", required_argument, NULL, 'f'},
		{"write", required_argument, NULL, 'w'},
		{"runs", required_argument, NULL, 'r'},
		{"threads", required_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	const char *schema = getenv("XDSD_SCHEMA"), *file = NULL, *out = NULL;
	static const char *const types[4][2] = {
		{"clusters", "envoy.config.cluster.v3.Cluster"},
		{"endpoints", "envoy.config.endpoint.v3.ClusterLoadAssignment"},
		{"listeners", "envoy.config.listener.v3.Listener"},
		{"routes", "envoy.config.route.v3.RouteConfiguration"},
	};
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_buf text = XD_BUF_INIT;
	struct best ev = {1e9, 1e9}, doc = {1e9, 1e9}, tc = {1e9, 1e9},
		    par = {1e9, 1e9};
	double t0, c0, load;
	struct totals tot = {0, 0};
	struct xd_schema *s;
	int runs = 3, threads = 2, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': schema = optarg; break;
		case 'f': file = optarg; break;
		case 'w': out = optarg; break;
		case 'r': runs = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		default: return 2;
		}
	}
	if (schema == NULL)
		schema = XD_BUILD_DIR "/proto/xds-api.pb";
	t0 = now();
	s = xd_schema_load(schema, &diag);
	load = now() - t0;
	if (s == NULL) {
		xd_diag_print(&diag, stderr);
		return 1;
	}
	for (int i = 0; i < 4; i++) {
		sections[i].key = types[i][0];
		sections[i].type = xd_schema_find_message(s, types[i][1]);
	}
	if (file != NULL) {
		FILE *f = fopen(file, "rb");
		size_t n;

		if (f == NULL) {
			perror(file);
			return 1;
		}
		while ((n = fread(xd_buf_reserve(&text, 1 << 20), 1, 1 << 20, f)) > 0)
			text.len += n;
		fclose(f);
	} else {
		generate(&text);
	}
	if (out != NULL) {
		FILE *f = fopen(out, "wb");

		fwrite(text.data, 1, text.len, f);
		fclose(f);
	}
	printf("schema load: %.2f ms\n", load * 1e3);
	printf("input: %.1f MB\n", (double)text.len / 1e6);
	if (threads < 1 || threads > 64)
		threads = 1;
	for (int r = 0; r < runs; r++) {
		double t;

		c0 = cpu();
		t = events_only((const char *)text.data, text.len);
		keep(&ev, t, cpu() - c0);
		c0 = cpu();
		t = document((const char *)text.data, text.len);
		keep(&doc, t, cpu() - c0);

		tot.items = tot.bytes = 0;
		t0 = now();
		c0 = cpu();
		if (xd_transcode_yaml_file(s, "bench.yaml", (const char *)text.data,
					   text.len, 1, sections, 4,
					   xd_annotations_hooks(), count, &tot,
					   &diag) != 0) {
			xd_diag_print(&diag, stderr);
			return 1;
		}
		keep(&tc, now() - t0, cpu() - c0);
		{
			struct totals p = {0, 0};

			t0 = now();
			c0 = cpu();
			if (xd_transcode_yaml_file(s, "bench.yaml",
						   (const char *)text.data,
						   text.len, (unsigned)threads,
						   sections, 4,
						   xd_annotations_hooks(),
						   count, &p, &diag) != 0) {
				xd_diag_print(&diag, stderr);
				return 1;
			}
			keep(&par, now() - t0, cpu() - c0);
			if (p.items != tot.items || p.bytes != tot.bytes) {
				fprintf(stderr, "threads disagree: %zu/%zu items\n",
					p.items, tot.items);
				return 1;
			}
		}
	}
	printf("resources: %zu, encoded %.1f MB\n", tot.items,
	       (double)tot.bytes / 1e6);
	printf("%-22s %8s %8s %8s\n", "", "elapsed", "MB/s", "cpu");
#define REPORT(name, b)                                                   \
	printf("%-22s %7.3fs %8.1f %7.3fs\n", name, (b).wall,             \
	       (double)text.len / 1e6 / (b).wall, (b).cpu)
	REPORT("libyaml events", ev);
	REPORT("libyaml document", doc);
	REPORT("transcode", tc);
	{
		char name[32];

		snprintf(name, sizeof(name), "transcode x %d threads", threads);
		REPORT(name, par);
	}
	xd_buf_free(&text);
	xd_schema_free(s);
	return 0;
}
