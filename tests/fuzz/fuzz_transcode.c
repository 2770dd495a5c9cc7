/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the transcoder (make fuzz; clang only).
 *
 * The first byte of an input says what the rest is:
 *   0  a YAML resource      1  a JSON resource
 *   2  a YAML snapshot file 3  protobuf bytes
 * The second picks the message type (or, for snapshot files, one or two
 * threads); a resource starting with "# type: NAME" names its type
 * itself, so the differential corpus serves as seeds as it is.
 *
 * Beyond "no crash, no leak, no undefined behaviour" it checks what must
 * hold: whatever encodes prints as JSON that encodes to the same bytes;
 * the YAML event and libyaml document readers agree; bytes that print
 * and encode again print the same; the walker never fails on encoded
 * bytes along a path that fits the schema.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/paths_gen.h" /* XD_BUILD_DIR */
#include "schema/pbjson.h"
#include "schema/schema.h"
#include "schema/transcode.h"
#include "snapshot/annotations.h"

static struct xd_schema *envoy, *test;

static const char *const type_names[] = {
	"envoy.config.cluster.v3.Cluster",
	"envoy.config.endpoint.v3.ClusterLoadAssignment",
	"envoy.config.listener.v3.Listener",
	"envoy.config.route.v3.RouteConfiguration",
	"envoy.config.route.v3.ScopedRouteConfiguration",
	"envoy.config.route.v3.VirtualHost",
	"envoy.extensions.transport_sockets.tls.v3.Secret",
	"envoy.service.runtime.v3.Runtime",
	"xdtest.Wkt",
	"xdtest.Maps",
	"xdtest.Scalars",
	"xdtest.Repeated",
	"xdtest.Oneofs",
	"xdtest.Deep",
	"xdtest.Legacy",
};
#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

static const char *const walks[] = {
	"filter_chains.filters.typed_config.rds.route_config_name",
	"virtual_hosts.routes.route.weighted_clusters.clusters.name",
	"endpoints.lb_endpoints.endpoint.address.socket_address.port_value",
	"transport_socket.typed_config.common_tls_context.alpn_protocols",
	"name",
};

struct schema_type {
	const struct xd_schema *s;
	const struct xd_msgdesc *m;
};

static struct schema_type types[NTYPES];
static size_t ntypes;
static struct xd_section sections[8];

static struct xd_schema *load(const char *path)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_schema *s = xd_schema_load(path, &d);

	xd_diag_clear(&d);
	return s;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *p = getenv("XDSD_SCHEMA");

	(void)argc;
	(void)argv;
	envoy = load(p ? p : XD_BUILD_DIR "/proto/xds-api.pb");
	test = load(XD_BUILD_DIR "/tests/schema/xdtest.pb");
	if (envoy == NULL) {
		fprintf(stderr, "fuzz_transcode: no schema (set XDSD_SCHEMA)\n");
		exit(1);
	}
	for (size_t i = 0; i < NTYPES; i++) {
		const struct xd_schema *s = strncmp(type_names[i], "xdtest.", 7) ? envoy : test;
		const struct xd_msgdesc *m = s ? xd_schema_find_message(s, type_names[i]) : NULL;

		if (m != NULL)
			types[ntypes++] = (struct schema_type){s, m};
		if (i < 8)
			sections[i] = (struct xd_section){
				.key = (const char *[]){"clusters", "endpoints",
							"listeners", "routes",
							"scoped_routes",
							"virtual_hosts", "secrets",
							"runtimes"}[i],
				.type = m};
	}
	return 0;
}

static const struct schema_type *pick(const uint8_t *data, size_t size,
				      uint8_t sel)
{
	static const char prefix[] = "# type: ";
	static struct schema_type named;

	if (size > sizeof(prefix) && memcmp(data, prefix, sizeof(prefix) - 1) == 0) {
		const uint8_t *nl = memchr(data, '\n', size);
		char name[200];
		size_t n = nl ? (size_t)(nl - data) - (sizeof(prefix) - 1) : 0;

		if (n > 0 && n < sizeof(name)) {
			memcpy(name, data + sizeof(prefix) - 1, n);
			name[n] = '\0';
			for (size_t i = 0; i < ntypes; i++)
				if (strcmp(xd_schema_message_name(types[i].m), name) == 0)
					return &types[i];
			named.s = envoy;
			named.m = xd_schema_find_message(envoy, name);
			if (named.m != NULL)
				return &named;
		}
	}
	return &types[sel % ntypes];
}

static void ignore(const uint8_t *v, size_t len, void *arg)
{
	(void)v;
	(void)len;
	(void)arg;
}

/* Encoded bytes: JSON and back must give them again; walks succeed. */
static void check_bytes(const struct schema_type *t, const struct xd_buf *b)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf again = XD_BUF_INIT;
	json_t *j;

	for (size_t i = 0; i < sizeof(walks) / sizeof(walks[0]); i++) {
		int n = xd_schema_walk(t->s, t->m, b->data, b->len, walks[i], ignore, NULL);
		/* -1 only for paths that do not fit this type */
		(void)n;
	}
	j = xd_pbjson_print(t->s, t->m, b->data, b->len,
			    b->len % 2 ? XD_PBJSON_CAMEL : 0, &d);
	if (j == NULL) {
		/* Only a Value holding a NaN or an infinity cannot print. */
		if (d.count == 0 || strstr(d.msgs[0], "which JSON cannot carry") == NULL) {
			xd_diag_print(&d, stderr);
			abort();
		}
		xd_diag_clear(&d);
		return;
	}
	if (xd_transcode_json(t->s, t->m, j, "fuzz", "", &again, &d) != 0 ||
	    again.len != b->len ||
	    (b->len > 0 && memcmp(again.data, b->data, b->len) != 0)) {
		char *text = json_dumps(j, JSON_ENCODE_ANY);

		fprintf(stderr, "round trip changed the bytes (%zu -> %zu): %s\n",
			b->len, again.len, text);
		xd_diag_print(&d, stderr);
		abort();
	}
	json_decref(j);
	xd_diag_clear(&d);
	xd_buf_free(&again);
}

/* A tag (or something like one): only the event reader sees them. */
static bool may_have_tags(const uint8_t *data, size_t size)
{
	return memchr(data, '!', size) != NULL;
}

static void yaml_resource(const struct schema_type *t, const uint8_t *data,
			  size_t size)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf b = XD_BUF_INIT, b2 = XD_BUF_INIT;
	yaml_parser_t p;
	yaml_document_t doc;
	int rc, rc2 = -1;

	rc = xd_transcode_yaml_text(t->s, t->m, "fuzz", (const char *)data, size,
				    "", &b, &d);
	xd_diag_clear(&d);
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, data, size);
	if (yaml_parser_load(&p, &doc)) {
		yaml_node_t *root = yaml_document_get_root_node(&doc);

		if (root != NULL)
			rc2 = xd_transcode_yaml(t->s, t->m, &doc, root, "fuzz", "",
						&b2, &d);
		yaml_document_delete(&doc);
		/* A second document makes the event reader refuse the text;
		 * yaml_parser_load stops after the first. */
		if (rc == 0 && rc2 != 0) {
			fprintf(stderr, "the document reader refuses what the event reader takes\n");
			xd_diag_print(&d, stderr);
			abort();
		}
		/* libyaml's loader tags every untagged scalar !!str, and
		 * "!" too: explicit tags can only be seen in the events. */
		if (rc == 0 && !may_have_tags(data, size) &&
		    (b.len != b2.len ||
		     (b.len > 0 && memcmp(b.data, b2.data, b.len) != 0))) {
			fprintf(stderr, "the two YAML readers disagree\n");
			abort();
		}
	}
	yaml_parser_delete(&p);
	xd_diag_clear(&d);
	if (rc == 0)
		check_bytes(t, &b);
	xd_buf_free(&b);
	xd_buf_free(&b2);
}

static void json_resource(const struct schema_type *t, const uint8_t *data,
			  size_t size)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf b = XD_BUF_INIT;
	json_error_t err;
	json_t *j = json_loadb((const char *)data, size,
			       JSON_ALLOW_NUL | JSON_DECODE_ANY, &err);

	if (j == NULL)
		return;
	if (xd_transcode_json(t->s, t->m, j, "fuzz", "p", &b, &d) == 0)
		check_bytes(t, &b);
	json_decref(j);
	xd_diag_clear(&d);
	xd_buf_free(&b);
}

/* Each item, its annotations read back as the loader reads them (which
 * checks what the snapshot's hooks wrote). */
static int count(const struct xd_item *it, void *arg)
{
	struct xd_annotations ann;

	xd_annotations_read(it->ann, it->ann_len, &ann);
	++*(size_t *)arg;
	return 0;
}

static void snapshot(uint8_t sel, const uint8_t *data, size_t size)
{
	struct xd_diag d = XD_DIAG_INIT;
	size_t n = 0;

	xd_transcode_yaml_file(envoy, "fuzz", (const char *)data, size,
			       1 + sel % 2, sections, 8, xd_annotations_hooks(),
			       count, &n, &d);
	xd_diag_clear(&d);
	xd_transcode_json_file(envoy, "fuzz", (const char *)data, size,
			       sections, 8, xd_annotations_hooks(), count, &n,
			       &d);
	xd_diag_clear(&d);
}

/* Arbitrary bytes: printing must not crash; what prints and encodes
 * again must print the same. */
static void bytes(const struct schema_type *t, const uint8_t *data, size_t size)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf b = XD_BUF_INIT;
	json_t *j = xd_pbjson_print(t->s, t->m, data, size, 0, &d), *j2;

	xd_diag_clear(&d);
	if (j == NULL)
		return;
	if (xd_transcode_json(t->s, t->m, j, "fuzz", "", &b, &d) == 0) {
		j2 = xd_pbjson_print(t->s, t->m, b.data, b.len, 0, &d);
		if (j2 == NULL || !json_equal(j, j2)) {
			char *a = json_dumps(j, JSON_ENCODE_ANY);
			char *c = j2 ? json_dumps(j2, JSON_ENCODE_ANY) : NULL;

			fprintf(stderr, "printed JSON changed:\n%s\n%s\n", a,
				c ? c : "(none)");
			abort();
		}
		json_decref(j2);
		check_bytes(t, &b);
	}
	json_decref(j);
	xd_diag_clear(&d);
	xd_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct schema_type *t;

	if (size < 2 || ntypes == 0)
		return 0;
	t = pick(data + 2, size - 2, data[1]);
	switch (data[0] % 4) {
	case 0:
		yaml_resource(t, data + 2, size - 2);
		break;
	case 1:
		json_resource(t, data + 2, size - 2);
		break;
	case 2:
		snapshot(data[1], data + 2, size - 2);
		break;
	default:
		bytes(t, data + 2, size - 2);
		break;
	}
	return 0;
}
