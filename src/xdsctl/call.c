/* SPDX-License-Identifier: Apache-2.0 */
#include "xdsctl/call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/client.h"
#include "util/xalloc.h"
#include "xdsctl/show.h"

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int xc_call(const struct xc_opts *o, const char *method, const char *path,
	    struct xc_answer *a)
{
	struct xd_http_request q = {.target = o->admin, .method = method,
				    .path = path, .timeout_ms = o->timeout_ms};
	struct xd_http_response r;
	char why[512];
	json_error_t err;

	memset(a, 0, sizeof(*a));
	if (xd_http_fetch(&q, &r, why, sizeof(why)) != 0) {
		/* the usual first mistake is the address: say where it
		 * comes from */
		if (starts_with(why, "cannot connect") ||
		    starts_with(why, "cannot resolve"))
			xc_error("%s (is xdsd running? --admin or XDSCTL_ADMIN)", why);
		else
			xc_error("%s", why);
		return XC_UNREACHABLE;
	}
	/* the refusals read the body as a string (client.h) */
	XD_ASSERT_INFO(r.body != NULL && r.body[r.body_len] == '\0',
		       "answer of %s to %s", o->admin, path);
	a->status = r.status;
	a->body = r.body;
	a->len = r.body_len;
	a->type = r.content_type;
	if (starts_with(a->type, "application/json")) {
		a->json = json_loadb(a->body, a->len, 0, &err);
		if (a->json == NULL) {
			xc_error("bad answer from %s to %s: not JSON: %s (line %d)",
				 o->admin, path, err.text, err.line);
			xc_answer_free(a);
			return XC_UNREACHABLE;
		}
	}
	return XC_OK;
}

int xc_get_json(const struct xc_opts *o, const char *path,
		struct xc_answer *a)
{
	int rc = xc_call(o, "GET", path, a);

	if (rc != XC_OK)
		return rc;
	if (a->status == 200 && json_is_object(a->json))
		return XC_OK;
	rc = xc_refused(o, path, a);
	xc_answer_free(a);
	return rc;
}

/* The reason a refusal gives: its text, or a JSON answer's first error. */
static char *reason(const struct xc_answer *a)
{
	const char *text = a->body;
	size_t len = a->len;
	json_t *errors = json_object_get(a->json, "errors");

	if (a->json != NULL) {
		text = json_string_value(json_array_get(errors, 0));
		if (text == NULL)
			text = "(no reason given)";
		len = strlen(text);
	}
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	return xc_safe(text, len);
}

int xc_refused(const struct xc_opts *o, const char *path,
	       const struct xc_answer *a)
{
	int pathlen = (int)strcspn(path, "?");
	bool text = starts_with(a->type, "text/plain");
	bool refusal = a->status == 400 || a->status == 403 ||
		       a->status == 404 || a->status == 409 ||
		       a->status == 422 || a->status == 503;
	char *why = reason(a);
	int rc = XC_UNREACHABLE;

	/* xdsd's 404 for a path it does not know starts so; a 404 for a
	 * snapshot or a resource names what is missing */
	if (a->status == 404 && text && starts_with(a->body, "no such page")) {
		xc_error("%s does not serve %.*s: not xdsd, or an older one",
			 o->admin, pathlen, path);
	} else if (refusal && (text || a->json != NULL)) {
		xc_error("%s", why);
		rc = XC_FAILED;
	} else if (a->status == 404) {
		xc_error("%s does not serve %.*s: is it xdsd's admin endpoint?",
			 o->admin, pathlen, path);
	} else {
		xc_error("unexpected answer from %s to %.*s: HTTP %d: %.200s",
			 o->admin, pathlen, path, a->status, why);
	}
	free(why);
	return rc;
}

void xc_print_raw(const struct xc_answer *a)
{
	fwrite(a->body, 1, a->len, stdout);
	if (a->len > 0 && a->body[a->len - 1] != '\n')
		putchar('\n');
}

void xc_answer_free(struct xc_answer *a)
{
	free(a->body);
	free(a->type);
	json_decref(a->json);
	memset(a, 0, sizeof(*a));
}

void xc_query_add(struct xd_buf *path, const char *key, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	bool first = path->len == 0 || memchr(path->data, '?', path->len) == NULL;

	xd_buf_printf(path, "%c%s=", first ? '?' : '&', key);
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL) {
			xd_buf_putc(path, *p);
		} else {
			xd_buf_putc(path, '%');
			xd_buf_putc(path, (uint8_t)hex[*p >> 4]);
			xd_buf_putc(path, (uint8_t)hex[*p & 15]);
		}
	}
}
