/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/restext.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "schema/pbjson.h"
#include "util/diag.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

/* Nesting the printer allows (pbjson.h), plus the annotations' own. */
#define DEPTH_MAX 80

static void indent(struct xd_buf *out, int n)
{
	for (int i = 0; i < n; i++)
		xd_buf_putc(out, ' ');
}

/* A plain scalar YAML reads back as the same string: letters, digits
 * and a few marks, not starting with a mark, and not a word YAML gives
 * another meaning. Anything else is quoted, JSON-style (YAML reads
 * that too). */
static bool plain(const char *s, size_t len)
{
	static const char *const words[] = {"true", "false", "null", "yes",
					    "no", "on", "off", "~"};

	if (len == 0 || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("_-./", s[i]) == NULL)
			return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == len && strncasecmp(s, words[i], len) == 0)
			return false;
	return true;
}

static void scalar(struct xd_buf *out, json_t *v)
{
	char num[64];
	const char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_string_value(v);
		if (plain(s, json_string_length(v))) {
			xd_buf_append(out, s, json_string_length(v));
		} else {
			xd_buf_putc(out, '"');
			xd_json_escape(out, s, json_string_length(v));
			xd_buf_putc(out, '"');
		}
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		break;
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		break;
	case JSON_TRUE:
		snprintf(num, sizeof(num), "true");
		break;
	case JSON_FALSE:
		snprintf(num, sizeof(num), "false");
		break;
	default:
		snprintf(num, sizeof(num), "null");
		break;
	}
	xd_buf_printf(out, "%s", num);
}

static bool container(json_t *v)
{
	return (json_is_object(v) && json_object_size(v) > 0) ||
	       (json_is_array(v) && json_array_size(v) > 0);
}

static void value(struct xd_buf *out, json_t *v, int col, int depth);

/* The members of an object at column `col`; the first one's key is
 * already placed (after "- " in a list) when `first_placed`. */
static void members(struct xd_buf *out, json_t *obj, int col, bool first_placed,
		    int depth)
{
	const char *k;
	json_t *v;
	bool first = true;

	json_object_foreach(obj, k, v) {
		if (!(first && first_placed))
			indent(out, col);
		first = false;
		if (plain(k, strlen(k))) {
			xd_buf_printf(out, "%s:", k);
		} else {
			xd_buf_putc(out, '"');
			xd_json_escape(out, k, strlen(k));
			xd_buf_printf(out, "\":");
		}
		if (container(v)) {
			xd_buf_putc(out, '\n');
			value(out, v, col + 2, depth + 1);
		} else {
			xd_buf_putc(out, ' ');
			value(out, v, col, depth + 1);
		}
	}
}

/* `v` at column `col`: a container on lines of its own, a scalar (or
 * an empty container) on the current line. */
static void value(struct xd_buf *out, json_t *v, int col, int depth)
{
	size_t i;
	json_t *item;

	XD_ASSERT_INFO(depth < DEPTH_MAX, "resource text at depth %d", depth);
	if (json_is_object(v) && json_object_size(v) > 0) {
		members(out, v, col, false, depth);
		return;
	}
	if (json_is_array(v) && json_array_size(v) > 0) {
		json_array_foreach(v, i, item) {
			indent(out, col);
			xd_buf_printf(out, "- ");
			if (json_is_object(item) && json_object_size(item) > 0)
				members(out, item, col + 2, true, depth + 1);
			else if (container(item)) {
				xd_buf_putc(out, '\n');
				value(out, item, col + 2, depth + 1);
			} else {
				value(out, item, col + 2, depth + 1);
			}
		}
		return;
	}
	if (json_is_object(v))
		xd_buf_printf(out, "{}\n");
	else if (json_is_array(v))
		xd_buf_printf(out, "[]\n");
	else {
		scalar(out, v);
		xd_buf_putc(out, '\n');
	}
}

void xd_restext(struct xd_buf *out, const struct xd_schema *s, int t,
		const struct xd_entry *e)
{
	struct xd_section_info sec = xd_section(t);
	const struct xd_msgdesc *m = xd_schema_find_message(s, sec.message);
	struct xd_diag diag = XD_DIAG_INIT;
	json_t *body;

	if (e->restricted) {
		xd_buf_printf(out, "\"@allow\":%s\n", e->nallow ? "" : " []");
		for (uint32_t i = 0; i < e->nallow; i++) {
			xd_buf_printf(out, "- \"");
			xd_json_escape(out, e->allow[i], strlen(e->allow[i]));
			xd_buf_printf(out, "\"\n");
		}
	}
	if (e->ttl != NULL)
		xd_buf_printf(out, "\"@ttl\": %" PRIu32 "ms\n", e->ttl->ms);
	if (t == XD_SECRET) {
		/* its version still says whether it changed */
		xd_buf_printf(out, "# secret: content not shown (version %s)\n",
			      e->version);
		return;
	}
	body = m != NULL ? xd_pbjson_print(s, m, e->msg.data, e->msg.len, 0, &diag) :
			   NULL;
	if (body == NULL) {
		/* checked at load: shown rather than hidden if it happens */
		xd_buf_printf(out, "# cannot print: %s\n",
			      diag.count > 0 ? diag.msgs[0] : "no such message");
	} else {
		value(out, body, 0, 0);
		json_decref(body);
	}
	xd_diag_clear(&diag);
}
