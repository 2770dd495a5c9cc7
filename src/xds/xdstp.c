/* SPDX-License-Identifier: Apache-2.0 */
#include "xds/xdstp.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/wire.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xds/message.h"

#define SCHEME "xdstp://"
#define SCHEME_LEN 8

enum part { AUTHORITY, PATH, PARAM };

static bool unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

static bool pchar(unsigned char c)
{
	return unreserved(c) || strchr("!$&'()*+,;=:@", c) != NULL;
}

/* Bytes written as themselves in a part of the canonical form (the sets
 * gRPC's URI writer uses, so that names it sends are canonical). */
static bool literal(unsigned char c, enum part p)
{
	if (c == '\0')
		return false;
	switch (p) {
	case AUTHORITY:
		return pchar(c);
	case PATH:
		return pchar(c) || c == '/';
	case PARAM:
		return c != '&' && c != '=' && (pchar(c) || c == '/' || c == '?');
	}
	return false;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Appends `s` (len bytes) decoded and re-encoded for part `p`; -1 for a
 * bad escape or a NUL byte. */
static int put_part(struct xd_buf *out, const char *s, size_t len, enum part p)
{
	static const char digits[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0')
			return -1;
		if (c == '%') {
			int hi, lo;

			if (len - i < 3)
				return -1;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		if (literal(c, p)) {
			xd_buf_putc(out, c);
		} else {
			char esc[3] = {'%', digits[c >> 4], digits[c & 15]};

			xd_buf_append(out, esc, 3);
		}
	}
	return 0;
}

bool xd_xdstp_is(const char *name, size_t len)
{
	return len >= 6 && strncasecmp(name, SCHEME, 6) == 0;
}

struct param {
	size_t off, len; /* in the scratch buffer */
};

static int by_param(const void *pa, const void *pb, void *arg)
{
	const struct param *a = pa, *b = pb;
	const char *base = arg;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(base + a->off, base + b->off, n);

	return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

/* The parameters of `q` (without '?'), each as canonical key=value, in
 * `scratch`; their places in *params. -1 for a bad escape. */
static int read_params(const char *q, size_t len, struct xd_buf *scratch,
		       struct param **params, size_t *n)
{
	size_t cap = 0;

	*params = NULL;
	*n = 0;
	for (size_t start = 0; start <= len;) {
		const char *amp = memchr(q + start, '&', len - start);
		size_t end = amp != NULL ? (size_t)(amp - q) : len;
		const char *eq = memchr(q + start, '=', end - start);
		size_t klen = eq != NULL ? (size_t)(eq - (q + start)) : end - start;
		struct param pm = {scratch->len, 0};

		if (end > start) { /* "a=1&&b=2": empty pieces say nothing */
			if (put_part(scratch, q + start, klen, PARAM) != 0)
				return -1;
			xd_buf_putc(scratch, '=');
			if (eq != NULL &&
			    put_part(scratch, eq + 1, end - start - klen - 1,
				     PARAM) != 0)
				return -1;
			pm.len = scratch->len - pm.off;
			*params = xd_grow(*params, &cap, *n + 1, sizeof(**params));
			(*params)[(*n)++] = pm;
		}
		start = end + 1;
	}
	return 0;
}

char *xd_xdstp_canon(const char *name, size_t len, size_t *out_len,
		     struct xd_xdstp_parts *parts, const char **why)
{
	struct xd_buf out = XD_BUF_INIT, scratch = XD_BUF_INIT;
	struct xd_xdstp_parts pt = {0};
	const char *p = name + SCHEME_LEN, *end = name + len, *hash, *qm;
	const char *auth_end, *type_end, *path_end;
	struct param *params = NULL;
	size_t nparams = 0;

	if (len < SCHEME_LEN || strncasecmp(name, SCHEME, SCHEME_LEN) != 0) {
		*why = "an xdstp name starts with xdstp://";
		return NULL;
	}
	if (memchr(name, '\0', len) != NULL) {
		*why = "a NUL byte in the name";
		return NULL;
	}
	hash = memchr(p, '#', (size_t)(end - p));
	if (hash != NULL) {
		pt.fragment = true;
		end = hash;
	}
	qm = memchr(p, '?', (size_t)(end - p));
	path_end = qm != NULL ? qm : end;
	auth_end = memchr(p, '/', (size_t)(path_end - p));
	if (auth_end == NULL) {
		*why = "no resource type after the authority (xdstp://<authority>/<type>/<id>)";
		return NULL;
	}
	type_end = memchr(auth_end + 1, '/', (size_t)(path_end - auth_end - 1));
	if (type_end == NULL || type_end == auth_end + 1) {
		*why = type_end == NULL ?
			       "no id after the resource type (xdstp://<authority>/<type>/<id>)" :
			       "an empty resource type (xdstp://<authority>/<type>/<id>)";
		return NULL;
	}
	if (type_end + 1 == path_end) {
		*why = "an empty id (xdstp://<authority>/<type>/<id>)";
		return NULL;
	}
	xd_buf_append(&out, SCHEME, SCHEME_LEN);
	if (put_part(&out, p, (size_t)(auth_end - p), AUTHORITY) != 0)
		goto bad_escape;
	xd_buf_putc(&out, '/');
	pt.type = out.len;
	if (put_part(&out, auth_end + 1, (size_t)(type_end - auth_end - 1),
		     PATH) != 0)
		goto bad_escape;
	pt.type_len = out.len - pt.type;
	if (memchr((char *)out.data + pt.type, '/', pt.type_len) != NULL) {
		/* "%2F" in the type: no message name has one */
		*why = "a '/' in the resource type";
		goto fail;
	}
	xd_buf_putc(&out, '/');
	pt.id = out.len;
	if (put_part(&out, type_end + 1, (size_t)(path_end - type_end - 1),
		     PATH) != 0)
		goto bad_escape;
	pt.id_len = out.len - pt.id;
	{
		const char *id = (const char *)out.data + pt.id;
		const char *last = memrchr(id, '/', pt.id_len);
		size_t seg = last != NULL ? (size_t)(id + pt.id_len - last - 1) :
					    pt.id_len;

		pt.glob = seg == 1 && id[pt.id_len - 1] == '*';
	}
	pt.query = out.len;
	if (qm != NULL) {
		if (read_params(qm + 1, (size_t)(end - qm - 1), &scratch,
				&params, &nparams) != 0)
			goto bad_escape;
		if (nparams > 1)
			qsort_r(params, nparams, sizeof(*params), by_param,
				scratch.data);
		for (size_t i = 0; i < nparams; i++) {
			xd_buf_putc(&out, i == 0 ? '?' : '&');
			xd_buf_append(&out, scratch.data + params[i].off,
				   params[i].len);
		}
	}
	free(params);
	xd_buf_free(&scratch);
	xd_buf_putc(&out, '\0');
	*out_len = out.len - 1;
	if (parts != NULL)
		*parts = pt;
	return (char *)out.data;
bad_escape:
	*why = "a '%' not followed by two hex digits";
fail:
	free(params);
	xd_buf_free(&scratch);
	xd_buf_free(&out);
	return NULL;
}

/* In a canonical name: where its id's last segment starts and where
 * its parameters start; false if it has no id. */
static bool last_segment(const char *name, size_t len, size_t *seg,
			 size_t *query)
{
	const char *p, *auth_end, *type_end, *q, *slash;

	if (len <= SCHEME_LEN || memcmp(name, SCHEME, SCHEME_LEN) != 0)
		return false;
	p = name + SCHEME_LEN;
	q = memchr(p, '?', len - SCHEME_LEN);
	if (q == NULL)
		q = name + len;
	auth_end = memchr(p, '/', (size_t)(q - p));
	if (auth_end == NULL)
		return false;
	type_end = memchr(auth_end + 1, '/', (size_t)(q - auth_end - 1));
	if (type_end == NULL || type_end + 1 == q)
		return false;
	slash = memrchr(type_end, '/', (size_t)(q - type_end));
	*seg = (size_t)(slash + 1 - name);
	*query = (size_t)(q - name);
	return true;
}

bool xd_xdstp_is_glob(const char *name, size_t len)
{
	size_t seg, query;

	return last_segment(name, len, &seg, &query) && query == seg + 1 &&
	       name[seg] == '*';
}

size_t xd_xdstp_collection(const char *name, size_t len, char *buf)
{
	size_t seg, query;

	if (!last_segment(name, len, &seg, &query) ||
	    (query == seg + 1 && name[seg] == '*'))
		return 0;
	/* then the name fits the caller's "room for len + 2 bytes" */
	XD_ASSERT(seg <= query && query <= len);
	memcpy(buf, name, seg);
	buf[seg] = '*';
	memcpy(buf + seg + 1, name + query, len - query);
	buf[seg + 1 + len - query] = '\0';
	return seg + 1 + len - query;
}

/* ---------------- ResourceLocator ---------------- */

/* Appends the bytes a part of a canonical name stands for (its escapes
 * are well formed: xd_xdstp_canon wrote them). */
static void put_decoded(struct xd_buf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len) {
			XD_ASSERT(hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0);
			xd_buf_putc(out, (char)(hexval(s[i + 1]) << 4 |
						hexval(s[i + 2])));
			i += 2;
		} else {
			xd_buf_putc(out, s[i]);
		}
	}
}

/* Appends raw bytes as part `p` of a name: those that may stand as
 * themselves as they are, the others %XX. */
static void put_raw(struct xd_buf *out, const uint8_t *s, size_t len,
		    enum part p)
{
	static const char digits[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		if (literal(s[i], p)) {
			xd_buf_putc(out, (char)s[i]);
		} else {
			char esc[3] = {'%', digits[s[i] >> 4], digits[s[i] & 15]};

			xd_buf_append(out, esc, 3);
		}
	}
}

/* A context parameter, decoded: offsets into a scratch buffer. */
struct kv {
	size_t k, klen, v, vlen;
};

static int by_key(const void *pa, const void *pb, void *arg)
{
	const struct kv *a = pa, *b = pb;
	const char *base = arg;
	size_t n = a->klen < b->klen ? a->klen : b->klen;
	int c = memcmp(base + a->k, base + b->k, n);

	return c != 0 ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

/* The decoded parameters of canonical `q` ("k=v&k2=v2", no '?'), sorted
 * by key as a map's entries are written; -1 if a key repeats. */
static int decode_params(const char *q, size_t len, struct xd_buf *scratch,
			 struct kv **kvs, size_t *n)
{
	size_t cap = 0;

	*kvs = NULL;
	*n = 0;
	for (size_t start = 0; start < len;) {
		const char *amp = memchr(q + start, '&', len - start);
		size_t end = amp != NULL ? (size_t)(amp - q) : len;
		const char *eq = memchr(q + start, '=', end - start);
		struct kv kv;

		/* canonical: every parameter is key=value */
		XD_ASSERT(eq != NULL);
		kv.k = scratch->len;
		put_decoded(scratch, q + start, (size_t)(eq - (q + start)));
		kv.klen = scratch->len - kv.k;
		kv.v = scratch->len;
		put_decoded(scratch, eq + 1, (size_t)(q + end - eq - 1));
		kv.vlen = scratch->len - kv.v;
		*kvs = xd_grow(*kvs, &cap, *n + 1, sizeof(**kvs));
		(*kvs)[(*n)++] = kv;
		start = end + 1;
	}
	if (*n > 1)
		qsort_r(*kvs, *n, sizeof(**kvs), by_key, scratch->data);
	for (size_t i = 1; i < *n; i++)
		if (by_key(&(*kvs)[i - 1], &(*kvs)[i], scratch->data) == 0)
			return -1;
	return 0;
}

static bool utf8(const uint8_t *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if ((k = xd_text_utf8_len(s + i, n - i)) == 0)
			return false;
	return true;
}

int xd_xdstp_to_locator(const char *url, size_t len, struct xd_buf *out,
			const char **why)
{
	struct xd_buf tmp = XD_BUF_INIT;
	struct xd_xdstp_parts pt;
	struct kv *kvs = NULL;
	size_t clen, n = 0, mark, id, auth, type;
	char *c = xd_xdstp_canon(url, len, &clen, &pt, why);
	int rc = -1;

	if (c == NULL)
		return -1;
	if (pt.fragment) {
		*why = "directives ('#...') are not supported";
		goto out;
	}
	if (pt.query < clen &&
	    decode_params(c + pt.query + 1, clen - pt.query - 1, &tmp, &kvs,
			  &n) != 0) {
		*why = "a context parameter given twice";
		goto out;
	}
	/* decoded first, so that nothing is written for a refused name */
	id = tmp.len;
	put_decoded(&tmp, c + pt.id, pt.id_len);
	auth = tmp.len;
	put_decoded(&tmp, c + SCHEME_LEN, pt.type - 1 - SCHEME_LEN);
	type = tmp.len;
	put_decoded(&tmp, c + pt.type, pt.type_len);
	/* each part lands in a proto3 string, which a peer refuses (and
	 * xdsd's own printer too) unless it is UTF-8 */
	if (!utf8(tmp.data + id, auth - id))
		*why = "its id is not UTF-8 once its %XX escapes are decoded";
	else if (!utf8(tmp.data + auth, type - auth))
		*why = "its authority is not UTF-8 once its %XX escapes are decoded";
	else if (!utf8(tmp.data + type, tmp.len - type))
		*why = "its resource type is not UTF-8 once its %XX escapes are decoded";
	else
		*why = NULL;
	if (*why != NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!utf8(tmp.data + kvs[i].k, kvs[i].klen) ||
		    !utf8(tmp.data + kvs[i].v, kvs[i].vlen)) {
			*why = "a context parameter is not UTF-8 once its %XX escapes are decoded";
			goto out;
		}
	/* fields in number order; scheme XDSTP is 0, the default */
	xd_wire_bytes(out, XD_LOCATOR_ID, tmp.data + id, auth - id);
	if (type > auth)
		xd_wire_bytes(out, XD_LOCATOR_AUTHORITY, tmp.data + auth,
			      type - auth);
	xd_wire_bytes(out, XD_LOCATOR_RESOURCE_TYPE, tmp.data + type,
		      tmp.len - type);
	if (n > 0) {
		xd_wire_tag(out, XD_LOCATOR_EXACT_CONTEXT, XD_WT_LEN);
		mark = xd_wire_open(out);
		for (size_t i = 0; i < n; i++) {
			size_t m;

			xd_wire_tag(out, XD_CONTEXT_PARAMS, XD_WT_LEN);
			m = xd_wire_open(out);
			xd_wire_bytes(out, XD_MAP_KEY, tmp.data + kvs[i].k,
				      kvs[i].klen);
			xd_wire_bytes(out, XD_MAP_VALUE, tmp.data + kvs[i].v,
				      kvs[i].vlen);
			xd_wire_close(out, m);
		}
		xd_wire_close(out, mark);
	}
	rc = 0;
out:
	free(kvs);
	free(c);
	xd_buf_free(&tmp);
	return rc;
}

/* The parameters of a ContextParams as "?k=v&k2=v2", in no order. */
static int params_from(struct xd_buf *url, const uint8_t *p,
		       const uint8_t *end)
{
	struct xd_wire_field f, g;
	bool first = true;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		const uint8_t *q = f.data, *qend = f.data + f.len;
		struct xd_wire_field key = {0}, value = {0};

		if (f.number != XD_CONTEXT_PARAMS)
			continue;
		if (f.wt != XD_WT_LEN)
			return -1;
		while ((rc = xd_wire_next(&q, qend, &g)) == 1) {
			if (g.wt != XD_WT_LEN)
				continue;
			if (g.number == XD_MAP_KEY)
				key = g;
			else if (g.number == XD_MAP_VALUE)
				value = g;
		}
		if (rc != 0)
			return -1;
		xd_buf_putc(url, first ? '?' : '&');
		first = false;
		put_raw(url, key.data, key.len, PARAM);
		xd_buf_putc(url, '=');
		put_raw(url, value.data, value.len, PARAM);
	}
	return rc;
}

char *xd_xdstp_from_locator(const uint8_t *msg, size_t len, size_t *out_len,
			    struct xd_xdstp_parts *parts, const char **why)
{
	const uint8_t *p = msg, *end = len > 0 ? msg + len : msg;
	struct xd_wire_field f, id = {0}, auth = {0}, type = {0}, ctx = {0};
	struct xd_buf url = XD_BUF_INIT;
	uint64_t scheme = 0;
	bool directives = false;
	char *c = NULL;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_LOCATOR_SCHEME && f.wt == XD_WT_VARINT)
			scheme = f.v;
		else if (f.wt != XD_WT_LEN)
			continue;
		else if (f.number == XD_LOCATOR_ID)
			id = f;
		else if (f.number == XD_LOCATOR_AUTHORITY)
			auth = f;
		else if (f.number == XD_LOCATOR_RESOURCE_TYPE)
			type = f;
		else if (f.number == XD_LOCATOR_EXACT_CONTEXT)
			ctx = f;
		else if (f.number == XD_LOCATOR_DIRECTIVES)
			directives = true;
	}
	if (rc != 0) {
		*why = "a malformed ResourceLocator";
		return NULL;
	}
	if (scheme != 0) {
		*why = "not an xdstp:// locator (scheme XDSTP)";
		return NULL;
	}
	if (directives) {
		*why = "directives are not supported";
		return NULL;
	}
	if (type.len > 0 && memchr(type.data, '/', type.len) != NULL) {
		*why = "a '/' in the resource type";
		return NULL;
	}
	xd_buf_append(&url, SCHEME, SCHEME_LEN);
	put_raw(&url, auth.data, auth.len, AUTHORITY);
	xd_buf_putc(&url, '/');
	put_raw(&url, type.data, type.len, PATH);
	xd_buf_putc(&url, '/');
	put_raw(&url, id.data, id.len, PATH);
	if (ctx.data != NULL && params_from(&url, ctx.data, ctx.data + ctx.len) != 0)
		*why = "a malformed ResourceLocator";
	else
		c = xd_xdstp_canon((const char *)url.data, url.len, out_len,
				   parts, why);
	xd_buf_free(&url);
	return c;
}
