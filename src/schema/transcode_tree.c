/* Resources from trees others built: libyaml documents, jansson values,
 * and JSON snapshot files. */
#include "schema/transcode_int.h"

#include <stdio.h>
#include <string.h>

#include "schema/doc.h"
#include "schema/encode.h"

int xd_transcode_yaml(const struct xd_schema *s, const struct xd_msgdesc *m,
		      yaml_document_t *doc, yaml_node_t *node,
		      const char *file, const char *path, struct xd_buf *out,
		      struct xd_diag *diag)
{
	struct xd_arena arena = XD_ARENA_INIT;
	struct xd_encoder enc;
	struct xd_doc_error err;
	struct xd_dnode n;
	int rc;

	if (xd_doc_from_yaml_node(&arena, doc, node, &n, &err) != 0) {
		xd_diag_add(diag, "%s:%u:%u: %s", file, err.line, err.col,
			    err.msg);
		xd_arena_free(&arena);
		return -1;
	}
	xd_encoder_init(&enc, s);
	rc = xd_encoder_run(&enc, m, &n, file, path, out, diag);
	xd_encoder_free(&enc);
	xd_arena_free(&arena);
	return rc;
}

static int json_doc(struct xd_arena *arena, json_t *v, const char *file,
		    const char *path, struct xd_dnode *n, struct xd_diag *diag)
{
	struct xd_doc_error err;

	if (xd_doc_from_json(arena, v, n, &err) == 0)
		return 0;
	xd_diag_add(diag, "%s: %s%s%s", file, path ? path : "",
		    path && *path ? ": " : "", err.msg);
	return -1;
}

int xd_transcode_json(const struct xd_schema *s, const struct xd_msgdesc *m,
		      json_t *v, const char *file, const char *path,
		      struct xd_buf *out, struct xd_diag *diag)
{
	struct xd_arena arena = XD_ARENA_INIT;
	struct xd_encoder enc;
	struct xd_dnode n;
	int rc = -1;

	if (json_doc(&arena, v, file, path, &n, diag) == 0) {
		xd_encoder_init(&enc, s);
		rc = xd_encoder_run(&enc, m, &n, file, path, out, diag);
		xd_encoder_free(&enc);
	}
	xd_arena_free(&arena);
	return rc;
}

int xd_transcode_json_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len,
			   const struct xd_section *sections, size_t nsections,
			   xd_item_fn fn, void *arg, struct xd_diag *diag)
{
	struct xd_arena arena = XD_ARENA_INIT;
	struct xd_encoder enc;
	struct xd_buf out = XD_BUF_INIT;
	json_error_t jerr;
	const char *key;
	json_t *root, *list;
	int failed = 0, stopped = 0;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			  &jerr);
	if (root == NULL) {
		xd_diag_add(diag, "%s:%d:%d: %s", file, jerr.line, jerr.column,
			    jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		xd_diag_add(diag, "%s: a snapshot file must be an object of arrays (\"clusters\", \"listeners\", ...)",
			    file);
		json_decref(root);
		return -1;
	}
	xd_encoder_init(&enc, s);
	json_object_foreach(root, key, list) {
		const struct xd_section *sec;

		sec = xd_transcode_section(sections, nsections, key,
					   strlen(key));
		if (sec == NULL) {
			xd_transcode_unknown_section(diag, file, key,
						     strlen(key), sections,
						     nsections);
			failed = 1;
			continue;
		}
		if (json_is_null(list))
			continue;
		if (!json_is_array(list)) {
			xd_diag_add(diag, "%s: %s: expected a list of %s",
				    file, sec->key, sec->type->full_name);
			failed = 1;
			continue;
		}
		for (size_t i = 0; i < json_array_size(list) && !stopped; i++) {
			char path[160];
			struct xd_dnode n;
			struct xd_item it;

			snprintf(path, sizeof(path), "%s[%zu]", sec->key, i);
			out.len = 0;
			if (json_doc(&arena, json_array_get(list, i), file, path,
				     &n, diag) != 0 ||
			    xd_encoder_run(&enc, sec->type, &n, file, path, &out,
					   diag) != 0) {
				failed = 1;
			} else {
				it = (struct xd_item){sec, i, 0, 0, path,
						      out.data, out.len};
				if (fn != NULL && fn(&it, arg) != 0)
					stopped = 1;
			}
			xd_arena_reset(&arena);
		}
		if (stopped)
			break;
	}
	xd_encoder_free(&enc);
	xd_arena_free(&arena);
	xd_buf_free(&out);
	json_decref(root);
	return failed || stopped ? -1 : 0;
}
