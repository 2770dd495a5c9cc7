/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/request.h"

#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "wire/wire.h"
#include "util/buf.h"
#include "util/xalloc.h"
#include "xds/dynparam.h"
#include "xds/xdstp.h"
#include "xds/message.h"

/* Appends to an array of names that grows as needed. */
static void push(struct xd_name **v, size_t *n, size_t *cap, struct xd_name x)
{
	*v = xd_grow(*v, cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = x;
}

static struct xd_name as_name(const struct xd_wire_field *f)
{
	return (struct xd_name){(const char *)f->data, f->len};
}

/* google.rpc.Status: only its code and message; its details (Any
 * messages of any depth) are never looked into. */
static int parse_status(struct xd_request *r, const uint8_t *p,
			const uint8_t *end)
{
	struct xd_wire_field f;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_STATUS_CODE && f.wt == XD_WT_VARINT)
			r->error_code = (int32_t)f.v;
		else if (f.number == XD_STATUS_MESSAGE && f.wt == XD_WT_LEN)
			r->error_message = as_name(&f);
	}
	return rc;
}

/* initial_resource_versions: a map<string, string> entry */
static int parse_initial(struct xd_request *r, const uint8_t *p,
			 const uint8_t *end)
{
	struct xd_wire_field f;
	struct xd_name key = {"", 0}, value = {"", 0};
	size_t cap;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_MAP_KEY && f.wt == XD_WT_LEN)
			key = as_name(&f);
		else if (f.number == XD_MAP_VALUE && f.wt == XD_WT_LEN)
			value = as_name(&f);
	}
	if (rc < 0)
		return -1;
	/* two arrays of one capacity: the second follows the first */
	cap = r->cap_initial;
	r->initial_names = xd_grow(r->initial_names, &r->cap_initial,
				   r->ninitial + 1, sizeof(*r->initial_names));
	if (r->cap_initial != cap)
		r->initial_versions = xd_reallocarray(r->initial_versions,
						      r->cap_initial,
						      sizeof(*r->initial_versions));
	r->initial_names[r->ninitial] = key;
	r->initial_versions[r->ninitial++] = value;
	return 0;
}

/* One dynamic_parameters entry of a ResourceLocator (map<string, string>). */
static int parse_param(const uint8_t *p, const uint8_t *end,
		       struct xd_dparam *d)
{
	struct xd_wire_field f;
	int rc;

	*d = (struct xd_dparam){{"", 0}, {"", 0}};
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_MAP_KEY && f.wt == XD_WT_LEN)
			d->key = as_name(&f);
		else if (f.number == XD_MAP_VALUE && f.wt == XD_WT_LEN)
			d->value = as_name(&f);
	}
	return rc;
}

/*
 * A ResourceLocator (rule P1): its key (xds/dynparam.h), owned by the
 * request, in *out. At most XD_DPARAM_MAX parameters, a key of at most
 * XD_LOCATOR_KEY_MAX bytes: what a client can make xdsd keep is bounded
 * as names are.
 */
static int parse_locator(struct xd_request *r, const uint8_t *p,
			 const uint8_t *end, struct xd_name *out,
			 const char **why)
{
	struct xd_dparam params[XD_DPARAM_MAX];
	struct xd_name name = {"", 0};
	struct xd_wire_field f;
	size_t n = 0, len;
	char *key, *canon = NULL;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.wt != XD_WT_LEN)
			continue;
		if (f.number == XD_LOCATOR_NAME) {
			name = as_name(&f);
		} else if (f.number == XD_LOCATOR_PARAMETERS) {
			if (n == XD_DPARAM_MAX) {
				*why = "a resource locator with more than 32 dynamic parameters";
				return -1;
			}
			if (parse_param(f.data, f.data + f.len, &params[n++]) < 0)
				break;
		}
	}
	if (rc < 0) {
		*why = "malformed resource locator";
		return -1;
	}
	/* an xdstp name by any spelling, as plain names are (rule X1); one
	 * that is not well-formed stays as it is, and is not found */
	if (xd_xdstp_is(name.data, name.len)) {
		const char *bad;
		size_t clen;

		canon = xd_xdstp_canon(name.data, name.len, &clen, NULL, &bad);
		if (canon != NULL)
			name = (struct xd_name){canon, clen};
	}
	key = xd_locator_key(name, params, n, &len, why);
	free(canon);
	if (key == NULL)
		return -1;
	r->keys = xd_grow(r->keys, &r->cap_keys, r->nkeys + 1, sizeof(*r->keys));
	r->keys[r->nkeys++] = key;
	*out = (struct xd_name){key, len};
	return 0;
}

/*
 * Whether a plain name holds the byte that makes a locator key (rule
 * P1, xds/dynparam.h). Such a name would be taken for a key: looked up
 * as a variant, and reported missing under another name than the one
 * the client sent. No resource can have it (the loader refuses it), so
 * the request is refused rather than the name quietly misread.
 */
static bool holds_sep(struct xd_name n)
{
	return n.len > 0 && memchr(n.data, XD_LOCATOR_SEP, n.len) != NULL;
}

int xd_request_parse(struct xd_request *r, const uint8_t *data, size_t len,
		     bool delta, const char **why)
{
	/* Field numbers differ between the two messages. */
	const uint32_t f_node = delta ? XD_DELTA_REQUEST_NODE : XD_REQUEST_NODE,
		       f_type = delta ? XD_DELTA_REQUEST_TYPE_URL :
					XD_REQUEST_TYPE_URL,
		       f_names = delta ? XD_DELTA_REQUEST_SUBSCRIBE :
					 XD_REQUEST_RESOURCE_NAMES,
		       f_nonce = delta ? XD_DELTA_REQUEST_RESPONSE_NONCE :
					 XD_REQUEST_RESPONSE_NONCE,
		       f_error = delta ? XD_DELTA_REQUEST_ERROR_DETAIL :
					 XD_REQUEST_ERROR_DETAIL;
	/* an empty message may come as (NULL, 0): no arithmetic on NULL */
	const uint8_t *p = data, *end = len > 0 ? data + len : data;
	struct xd_wire_field f;
	XXH3_state_t st; /* on the stack: no allocation per request */
	int rc;

	memset(r, 0, sizeof(*r));
	r->delta = delta;
	XXH3_64bits_reset(&st);
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.wt != XD_WT_LEN)
			continue; /* no varint field matters here */
		if (f.number == f_names) {
			uint32_t n = (uint32_t)f.len;

			if (holds_sep(as_name(&f)))
				goto sep;

			XXH3_64bits_update(&st, &n, sizeof(n));
			XXH3_64bits_update(&st, f.data, f.len);
			push(&r->names, &r->nnames, &r->cap_names, as_name(&f));
		} else if (f.number == (delta ? XD_DELTA_REQUEST_LOCATORS_SUBSCRIBE :
						XD_REQUEST_RESOURCE_LOCATORS) ||
			   (delta && f.number == XD_DELTA_REQUEST_LOCATORS_UNSUBSCRIBE)) {
			struct xd_name key;

			if (parse_locator(r, f.data, f.data + f.len, &key, why) != 0)
				goto fail;
			if (f.number == XD_DELTA_REQUEST_LOCATORS_UNSUBSCRIBE) {
				push(&r->unsubscribe, &r->nunsubscribe,
				     &r->cap_unsub, key);
				continue;
			}
			/* in the hash of the list, told apart from names */
			XXH3_64bits_update(&st, "\x1f", 1);
			XXH3_64bits_update(&st, key.data, key.len);
			push(&r->names, &r->nnames, &r->cap_names, key);
		} else if (f.number == f_type) {
			r->type_url = as_name(&f);
		} else if (f.number == f_nonce) {
			r->nonce = as_name(&f);
		} else if (f.number == f_node) {
			r->node = (struct xd_span){f.data, (uint32_t)f.len};
		} else if (f.number == f_error) {
			r->has_error = true;
			if (parse_status(r, f.data, f.data + f.len) < 0) {
				*why = "malformed error_detail";
				goto fail;
			}
		} else if (!delta && f.number == XD_REQUEST_VERSION_INFO) {
			r->version_info = as_name(&f);
		} else if (delta && f.number == XD_DELTA_REQUEST_UNSUBSCRIBE) {
			if (holds_sep(as_name(&f)))
				goto sep;
			push(&r->unsubscribe, &r->nunsubscribe, &r->cap_unsub,
			     as_name(&f));
		} else if (delta && f.number == XD_DELTA_REQUEST_INITIAL_VERSIONS) {
			if (parse_initial(r, f.data, f.data + f.len) != 0) {
				*why = "malformed initial_resource_versions";
				goto fail;
			}
		}
	}
	if (rc < 0) {
		*why = delta ? "not a DeltaDiscoveryRequest (malformed protobuf)" :
			       "not a DiscoveryRequest (malformed protobuf)";
		goto fail;
	}
	/* A type URL is text: one with a NUL would be cut short wherever
	 * it is kept or logged as a C string. */
	if (r->type_url.len > 0 &&
	    memchr(r->type_url.data, 0, r->type_url.len) != NULL) {
		*why = "type_url must not contain NUL bytes";
		goto fail;
	}
	for (size_t i = 0; i < r->ninitial; i++)
		if (holds_sep(r->initial_names[i]))
			goto sep;
	r->names_hash = XXH3_64bits_digest(&st);
	return 0;
sep:
	*why = "a resource name must not contain the byte 0x1f";
fail:
	xd_request_free(r);
	return -1;
}

void xd_request_free(struct xd_request *r)
{
	free(r->names);
	free(r->unsubscribe);
	free(r->initial_names);
	free(r->initial_versions);
	for (size_t i = 0; i < r->nkeys; i++)
		free(r->keys[i]);
	free(r->keys);
	memset(r, 0, sizeof(*r));
}
