/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The transcoder from the command line, for the differential and
 * bad-input tests (and for trying documents by hand).
 *
 *   transcode-tool --schema F --type MSG [--from yaml|yamldoc|json] FILE
 *       encodes the one resource in FILE; bytes on stdout
 *   transcode-tool --schema F --type MSG --to-json [--camel] FILE
 *       prints FILE's bytes as JSON
 *   transcode-tool --schema F --type MSG --walk PATH FILE
 *       prints each value PATH reaches in FILE's bytes, one a line
 *   transcode-tool --schema F --snapshot FILE
 *       encodes a snapshot file (sections as in docs/design.md §3) and prints
 *       "path line:column length" per resource (--threads N: in
 *       pieces, as the daemon does); with --bytes also the resource's
 *       bytes in hex and its annotations ("@ttl=MS", "@allow=G,G",
 *       "@anyone", "@dpc=HEX": "@dynamic_parameter_constraints" encoded,
 *       "@name=NAME")
 *
 * Errors go to stderr, one a line; the exit status is 1 on any error.
 * FILE "-" is standard input.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/pbjson.h"
#include "schema/schema.h"
#include "schema/transcode.h"
#include "snapshot/annotations.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	struct xd_buf b = XD_BUF_INIT;
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	do {
		xd_buf_reserve(&b, 65536);
		n = fread(b.data + b.len, 1, 65536, f);
		b.len += n;
	} while (n > 0);
	if (f != stdin)
		fclose(f);
	xd_buf_putc(&b, '\0');
	b.len--;
	return xd_buf_steal(&b, len);
}

static void print_value(const uint8_t *v, size_t len, void *arg)
{
	(void)arg;
	fwrite(v, 1, len, stdout);
	putchar('\n');
}

static int bytes_too;

static int print_item(const struct xd_item *it, void *arg)
{
	struct xd_annotations ann;

	(void)arg;
	xd_annotations_read(it->ann, it->ann_len, &ann);
	printf("%s %u:%u %zu", it->path, it->line, it->column, it->len);
	if (bytes_too) {
		putchar(' ');
		for (size_t i = 0; i < it->len; i++)
			printf("%02x", it->data[i]);
		if (ann.ttl_ms > 0)
			printf(" @ttl=%u", (unsigned)ann.ttl_ms);
		if (ann.allow_set) {
			printf(" @allow=");
			for (size_t i = 0; i < ann.nallow; i++)
				printf("%s%s", i ? "," : "", ann.allow[i]);
		}
		if (ann.allow_anyone)
			printf(" @anyone");
		if (ann.dpc != NULL) {
			printf(" @dpc=");
			for (size_t i = 0; i < ann.dpc_len; i++)
				printf("%02x", ann.dpc[i]);
		}
		if (ann.name != NULL)
			printf(" @name=%s", ann.name);
	}
	putchar('\n');
	return 0;
}

static const char *const section_types[][2] = {
	{"clusters", "envoy.config.cluster.v3.Cluster"},
	{"endpoints", "envoy.config.endpoint.v3.ClusterLoadAssignment"},
	{"listeners", "envoy.config.listener.v3.Listener"},
	{"routes", "envoy.config.route.v3.RouteConfiguration"},
	{"scoped_routes", "envoy.config.route.v3.ScopedRouteConfiguration"},
	{"virtual_hosts", "envoy.config.route.v3.VirtualHost"},
	{"secrets", "envoy.extensions.transport_sockets.tls.v3.Secret"},
	{"runtimes", "envoy.service.runtime.v3.Runtime"},
	{"listener_collections", "envoy.config.listener.v3.ListenerCollection"},
	{"cluster_collections", "envoy.config.cluster.v3.ClusterCollection"},
};

static unsigned threads = 1;

static int snapshot(const struct xd_schema *s, const char *file,
		    const char *text, size_t len, struct xd_diag *diag)
{
	size_t ntypes = sizeof(section_types) / sizeof(section_types[0]);
	struct xd_section secs[sizeof(section_types) / sizeof(section_types[0])];
	size_t n = 0;
	size_t flen = strlen(file);

	for (size_t i = 0; i < ntypes; i++) {
		secs[n].key = section_types[i][0];
		secs[n].type = xd_schema_find_message(s, section_types[i][1]);
		secs[n].name_key = NULL; /* items with errors are only reported */
		if (secs[n].type != NULL)
			n++;
	}
	if (flen > 5 && strcmp(file + flen - 5, ".json") == 0)
		return xd_transcode_json_file(s, file, text, len, secs, n,
					      xd_annotations_hooks(),
					      print_item, NULL, diag);
	return xd_transcode_yaml_file(s, file, text, len, threads, secs, n,
				      xd_annotations_hooks(), print_item, NULL,
				      diag);
}

static int from_yamldoc(const struct xd_schema *s, const struct xd_msgdesc *m,
			const char *file, const char *text, size_t len,
			struct xd_buf *out, struct xd_diag *diag)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = -1;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		xd_diag_add(diag, "%s:%zu:%zu: %s", file,
			    parser.problem_mark.line + 1,
			    parser.problem_mark.column + 1,
			    parser.problem ? parser.problem : "syntax error");
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&doc);

		if (root == NULL)
			xd_diag_add(diag, "%s: empty document", file);
		else
			rc = xd_transcode_yaml(s, m, &doc, root, file, "", out,
					       diag);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: transcode-tool --schema FILE (--type MSG [--from yaml|yamldoc|json | --to-json [--camel] | --walk PATH] | --snapshot [--bytes]) FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"schema", required_argument, NULL, 's'},
		{"type", required_argument, NULL, 't'},
		{"from", required_argument, NULL, 'f'},
		{"to-json", no_argument, NULL, 'j'},
		{"camel", no_argument, NULL, 'c'},
		{"walk", required_argument, NULL, 'w'},
		{"snapshot", no_argument, NULL, 'S'},
		{"path", required_argument, NULL, 'p'},
		{"threads", required_argument, NULL, 'T'},
		{"bytes", no_argument, NULL, 'B'},
		{NULL, 0, NULL, 0},
	};
	const char *schema = getenv("XDSD_SCHEMA"), *type = NULL;
	const char *from = "yaml", *walk = NULL, *path = "";
	int to_json = 0, camel = 0, snap = 0, c, rc = 1;
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_buf out = XD_BUF_INIT;
	const struct xd_msgdesc *m = NULL;
	struct xd_schema *s;
	uint8_t *text;
	size_t len;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': schema = optarg; break;
		case 't': type = optarg; break;
		case 'f': from = optarg; break;
		case 'j': to_json = 1; break;
		case 'c': camel = 1; break;
		case 'w': walk = optarg; break;
		case 'S': snap = 1; break;
		case 'p': path = optarg; break;
		case 'T': threads = (unsigned)atoi(optarg); break;
		case 'B': bytes_too = 1; break;
		default: usage();
		}
	}
	if (optind + 1 != argc || schema == NULL || (type == NULL && !snap))
		usage();
	s = xd_schema_load(schema, &diag);
	if (s == NULL)
		goto out;
	if (type != NULL && (m = xd_schema_find_message(s, type)) == NULL) {
		xd_diag_add(&diag, "%s: no message type %s in the schema",
			    schema, type);
		goto out;
	}
	text = slurp(argv[optind], &len);
	if (snap) {
		rc = snapshot(s, argv[optind], (const char *)text, len, &diag) ? 1 : 0;
	} else if (to_json) {
		json_t *j = xd_pbjson_print(s, m, text, len,
					    camel ? XD_PBJSON_CAMEL : 0, &diag);

		if (j != NULL) {
			char *str = json_dumps(j, JSON_INDENT(2) |
						       JSON_REAL_PRECISION(17));

			puts(str);
			free(str);
			json_decref(j);
			rc = 0;
		}
	} else if (walk != NULL) {
		int n = xd_schema_walk(s, m, text, len, walk, print_value, NULL);

		if (n < 0)
			xd_diag_add(&diag, "%s: cannot walk '%s'", argv[optind],
				    walk);
		rc = n < 0;
	} else if (strcmp(from, "json") == 0) {
		json_error_t err;
		json_t *j = json_loadb((const char *)text, len,
				       JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
				       &err);

		if (j == NULL) {
			xd_diag_add(&diag, "%s:%d:%d: %s", argv[optind],
				    err.line, err.column, err.text);
		} else {
			rc = xd_transcode_json(s, m, j, argv[optind], path,
					       &out, &diag) ? 1 : 0;
			json_decref(j);
		}
	} else if (strcmp(from, "yamldoc") == 0) {
		rc = from_yamldoc(s, m, argv[optind], (const char *)text, len,
				  &out, &diag) ? 1 : 0;
	} else if (strcmp(from, "yaml") == 0) {
		rc = xd_transcode_yaml_text(s, m, argv[optind],
					    (const char *)text, len, path,
					    &out, &diag) ? 1 : 0;
	} else {
		usage();
	}
	if (rc == 0 && out.len > 0)
		fwrite(out.data, 1, out.len, stdout);
	free(text);
out:
	xd_diag_print(&diag, stderr);
	xd_diag_clear(&diag);
	xd_buf_free(&out);
	xd_schema_free(s);
	return rc;
}
