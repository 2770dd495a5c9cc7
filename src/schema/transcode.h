/*
 * YAML and JSON documents → protobuf wire bytes, driven only by the
 * schema (proto3 JSON mapping: snake_case or lowerCamelCase names, enums
 * by name or number, 64-bit integers as numbers or strings, bytes as
 * base64, the well-known types in their JSON forms, Any by "@type").
 *
 * Output is deterministic: fields in field-number order, map entries by
 * key, proto3 defaults without presence omitted (fields with presence --
 * oneof members, proto3 `optional`, messages -- are written even when
 * default), i.e. the bytes protobuf's SerializeToString(deterministic)
 * gives. Equal documents give equal bytes whatever their key order.
 *
 * "null" means "not set", except for google.protobuf.Value (NullValue).
 *
 * Errors go to `diag` as "file:line:column: path: reason" (JSON has no
 * per-value positions: "file: path: reason"), every error of a resource
 * up to XD_ENC_MAX_ERRORS, and every resource of a file up to the diag
 * list's own bound.
 *
 * Thread: any. The schema is shared read-only; everything else belongs
 * to the call.
 */
#ifndef XD_SCHEMA_TRANSCODE_H
#define XD_SCHEMA_TRANSCODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "schema/schema.h"
#include "util/buf.h"
#include "util/diag.h"

/* ---- a whole snapshot file ---- */

/* One top-level key of a snapshot file and the type of its list items. */
struct xd_section {
	const char *key; /* "clusters" */
	const struct xd_msgdesc *type;
};

/*
 * What a snapshot file says of a resource beside its fields: keys of the
 * resource's own mapping that start with "@", which no protobuf field
 * name can (docs/design.md §9), read and left out of its bytes.
 *
 *   "@allow": [GLOB, ...]  the identities the resource is served to
 *                          (xdsd-snapshot(5)); the keyword "@anyone"
 *                          serves it to every client, identified or not.
 *   "@ttl": DURATION       how long a client that lost xdsd may keep it
 *                          (docs/protocol.md, rule L1), "30s".
 *   "@dynamic_parameter_constraints": {...}
 *                          the parameters this variant of the name is
 *                          for (rule P1): a DynamicParameterConstraints
 *                          in the proto3 JSON form, encoded through the
 *                          schema and checked (xds/dynparam.h).
 *   "@name": NAME          the name of a resource whose message has no
 *                          name field: a list collection's
 *                          (docs/protocol.md, rule X3).
 *
 * Checked here, where positions are known: a list of non-empty strings,
 * at most XD_ALLOW_MAX of them, each at most XD_ALLOW_GLOB_MAX bytes; a
 * string starting with "@" must be a keyword; a TTL in whole
 * milliseconds from XD_TTL_MIN_MS to XD_TTL_MAX_MS; a name a non-empty
 * string. What they mean, and where they may stand, is the snapshot
 * loader's.
 */
#define XD_ALLOW_MAX 256
#define XD_ALLOW_GLOB_MAX 1024
/* A heartbeat goes at half the TTL: below a second it would be a flood;
 * 30 days keeps every TTL in 32 bits of milliseconds. */
#define XD_TTL_MIN_MS 1000u
#define XD_TTL_MAX_MS (30u * 24 * 3600 * 1000)

struct xd_annotations {
	bool allow_set;            /* "@allow" was given */
	bool allow_anyone;         /* ... and holds "@anyone" */
	const char *const *allow;  /* its globs, keywords left out */
	size_t nallow;
	uint32_t ttl_ms;           /* "@ttl", 0 when not given */
	/* "@dynamic_parameter_constraints", encoded; NULL when not given
	 * (an empty encoding is refused, so dpc_len > 0 when set) */
	const uint8_t *dpc;
	size_t dpc_len;
	const char *name;          /* "@name", NULL when not given */
};

/* One encoded resource, as handed to the caller. */
struct xd_item {
	const struct xd_section *section;
	size_t index;          /* position in the section's list */
	unsigned line, column; /* where it starts (0 for JSON) */
	const char *path;      /* "clusters[2]" */
	const uint8_t *data;   /* valid during the callback only */
	size_t len;
	struct xd_annotations ann; /* its strings too */
};

/* Returns 0 to go on, anything else to stop the file there. */
typedef int (*xd_item_fn)(const struct xd_item *item, void *arg);

/*
 * Parses a snapshot file: a mapping of section keys to lists of
 * resources (docs/design.md §3). Each item is encoded as its section's type
 * (its annotations read and left out: struct xd_annotations) and handed
 * to `fn` in file order, on the calling thread; items with
 * errors are reported and skipped, the rest still checked. Unknown or
 * repeated section keys, non-list values, YAML syntax errors and more
 * than one document are errors too. Returns 0 when the whole file is
 * good, -1 otherwise (then the caller discards what `fn` received).
 *
 * Works from libyaml's events and builds one resource's tree at a time,
 * so memory follows the largest resource, not the file. `text` need not
 * be NUL-terminated.
 *
 * With `threads` > 1, a large file (1 MB and more) is cut between the
 * items of its lists into that many pieces, parsed at once on as many
 * threads (libyaml is most of the cost, and it is single-threaded per
 * parser). Items are kept until every piece has succeeded and then
 * handed to `fn` in file order as above, so the result is the same as
 * with one thread; a file that cannot be cut safely (anchors, several
 * documents...) or that has errors is transcoded in one piece.
 */
int xd_transcode_yaml_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len, unsigned threads,
			   const struct xd_section *sections, size_t nsections,
			   xd_item_fn fn, void *arg, struct xd_diag *diag);

/* The same for a JSON snapshot file (an object of arrays). */
int xd_transcode_json_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len,
			   const struct xd_section *sections, size_t nsections,
			   xd_item_fn fn, void *arg, struct xd_diag *diag);

/* ---- one resource ---- */

/*
 * Encodes the single YAML document in `text` as a message of type `m`,
 * appending to `out`. `path` (may be "") prefixes field paths in errors.
 * Returns 0, or -1 with the errors in `diag` and `out` unchanged.
 */
int xd_transcode_yaml_text(const struct xd_schema *s,
			   const struct xd_msgdesc *m, const char *file,
			   const char *text, size_t len, const char *path,
			   struct xd_buf *out, struct xd_diag *diag);

/* A node of a document loaded with libyaml's yaml_parser_load. Tags
 * are lost there (libyaml gives every scalar !!str), so "!!str null"
 * is null here but the string "null" from xd_transcode_yaml_text. */
int xd_transcode_yaml(const struct xd_schema *s, const struct xd_msgdesc *m,
		      yaml_document_t *doc, yaml_node_t *node,
		      const char *file, const char *path, struct xd_buf *out,
		      struct xd_diag *diag);

/* A jansson value (load with JSON_ALLOW_NUL to get NUL bytes reported
 * with their path, and JSON_REJECT_DUPLICATES for duplicate keys). */
int xd_transcode_json(const struct xd_schema *s, const struct xd_msgdesc *m,
		      json_t *v, const char *file, const char *path,
		      struct xd_buf *out, struct xd_diag *diag);

#endif
