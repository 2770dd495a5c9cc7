/* SPDX-License-Identifier: Apache-2.0 */
#include "xds/dynparam.h"

#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"
#include "util/xalloc.h"

/* envoy.service.discovery.v3.DynamicParameterConstraints */
enum { DPC_SINGLE = 1, DPC_OR = 2, DPC_AND = 3, DPC_NOT = 4 };
/* ... its SingleConstraint, and ConstraintList */
enum { SINGLE_KEY = 1, SINGLE_VALUE = 2, SINGLE_EXISTS = 3 };
enum { LIST_CONSTRAINTS = 1 };

static int name_cmp(struct xd_name a, struct xd_name b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n > 0 ? memcmp(a.data, b.data, n) : 0;

	return c != 0 ? c : (a.len > b.len) - (a.len < b.len);
}

static int by_key(const void *pa, const void *pb)
{
	const struct xd_dparam *a = pa, *b = pb;

	return name_cmp(a->key, b->key);
}

static bool has_control(struct xd_name n)
{
	for (size_t i = 0; i < n.len; i++)
		if ((unsigned char)n.data[i] < 0x20)
			return true;
	return false;
}

char *xd_locator_key(struct xd_name name, struct xd_dparam *params, size_t n,
		     size_t *len, const char **why)
{
	size_t total = name.len + 1;
	char *key, *p;

	if (n > XD_DPARAM_MAX) {
		*why = "a resource locator with more than 32 dynamic parameters";
		return NULL;
	}
	if (has_control(name)) {
		*why = "a resource locator's name holds a control character";
		return NULL;
	}
	if (n > 1)
		qsort(params, n, sizeof(*params), by_key);
	for (size_t i = 0; i < n; i++) {
		if (has_control(params[i].key) || has_control(params[i].value)) {
			*why = "a dynamic parameter holds a control character";
			return NULL;
		}
		if (i > 0 && name_cmp(params[i - 1].key, params[i].key) == 0) {
			*why = "a dynamic parameter key given twice";
			return NULL;
		}
		total += (i > 0) + params[i].key.len + 1 + params[i].value.len;
	}
	if (total > XD_LOCATOR_KEY_MAX) {
		*why = "a resource locator longer than 4096 bytes";
		return NULL;
	}
	p = key = xd_malloc(total + 1);
	memcpy(p, name.data, name.len);
	p += name.len;
	*p++ = XD_LOCATOR_SEP;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*p++ = XD_LOCATOR_PAIR;
		memcpy(p, params[i].key.data, params[i].key.len);
		p += params[i].key.len;
		*p++ = XD_LOCATOR_KV;
		memcpy(p, params[i].value.data, params[i].value.len);
		p += params[i].value.len;
	}
	XD_ASSERT((size_t)(p - key) == total); /* the count above */
	*p = '\0';
	*len = total;
	return key;
}

int xd_locator_split(const char *key, size_t len, struct xd_name *name,
		     struct xd_dparam *params, size_t *n)
{
	const char *sep = memchr(key, XD_LOCATOR_SEP, len);
	const char *p, *end = key + len;
	size_t k = 0;

	if (sep == NULL)
		return -1;
	*name = (struct xd_name){key, (size_t)(sep - key)};
	for (p = sep + 1; p < end;) {
		const char *pair = memchr(p, XD_LOCATOR_PAIR, (size_t)(end - p));
		const char *stop = pair != NULL ? pair : end;
		const char *kv = memchr(p, XD_LOCATOR_KV, (size_t)(stop - p));

		if (kv == NULL || k == XD_DPARAM_MAX)
			return -1;
		if (params != NULL)
			params[k] = (struct xd_dparam){
				{p, (size_t)(kv - p)},
				{kv + 1, (size_t)(stop - kv - 1)}};
		k++;
		p = pair != NULL ? pair + 1 : end;
	}
	if (n != NULL)
		*n = k;
	return 0;
}

/* ---------------- constraints ---------------- */

static const char *check_single(const uint8_t *p, const uint8_t *end)
{
	struct xd_wire_field f;
	bool key = false;
	int kinds = 0, rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == SINGLE_KEY && f.wt == XD_WT_LEN)
			key = f.len > 0;
		else if ((f.number == SINGLE_VALUE || f.number == SINGLE_EXISTS) &&
			 f.wt == XD_WT_LEN)
			kinds++;
	}
	if (rc < 0)
		return "malformed constraints";
	if (!key)
		return "a single constraint needs a key";
	if (kinds != 1)
		return "a single constraint needs one of value or exists";
	return NULL;
}

static const char *check(const uint8_t *p, const uint8_t *end, unsigned depth);

static const char *check_list(const uint8_t *p, const uint8_t *end,
			      unsigned depth)
{
	struct xd_wire_field f;
	const char *why;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1)
		if (f.number == LIST_CONSTRAINTS && f.wt == XD_WT_LEN &&
		    (why = check(f.data, f.data + f.len, depth + 1)) != NULL)
			return why;
	return rc < 0 ? "malformed constraints" : NULL;
}

static const char *check(const uint8_t *p, const uint8_t *end, unsigned depth)
{
	struct xd_wire_field f;
	const char *why = NULL;
	int kinds = 0, rc;

	if (depth > XD_DPC_MAX_DEPTH)
		return "constraints nested deeper than 16 levels";
	while ((rc = xd_wire_next(&p, end, &f)) == 1 && why == NULL) {
		if (f.wt != XD_WT_LEN)
			continue;
		const uint8_t *q = f.data, *qe = f.data + f.len;

		switch (f.number) {
		case DPC_SINGLE:
			why = check_single(q, qe);
			break;
		case DPC_OR:
		case DPC_AND:
			why = check_list(q, qe, depth);
			break;
		case DPC_NOT:
			why = check(q, qe, depth + 1);
			break;
		default:
			continue;
		}
		kinds++;
	}
	if (why != NULL)
		return why;
	if (rc < 0)
		return "malformed constraints";
	if (kinds != 1)
		return "constraints need one of constraint, or_constraints, "
		       "and_constraints or not_constraints";
	return NULL;
}

const char *xd_dpc_check(const uint8_t *dpc, size_t len)
{
	const uint8_t *end = len > 0 ? dpc + len : dpc;

	return check(dpc, end, 1);
}

static const struct xd_dparam *find(const struct xd_dparam *params, size_t n,
				    struct xd_name key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = name_cmp(params[mid].key, key);

		if (c == 0)
			return &params[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool match_single(const uint8_t *p, const uint8_t *end,
			 const struct xd_dparam *params, size_t n)
{
	struct xd_wire_field f;
	struct xd_name key = {"", 0}, value = {"", 0};
	bool exists = false;
	const struct xd_dparam *d;

	while (xd_wire_next(&p, end, &f) == 1) {
		if (f.wt != XD_WT_LEN)
			continue;
		if (f.number == SINGLE_KEY)
			key = (struct xd_name){(const char *)f.data, f.len};
		else if (f.number == SINGLE_VALUE)
			value = (struct xd_name){(const char *)f.data, f.len};
		else if (f.number == SINGLE_EXISTS)
			exists = true;
	}
	d = find(params, n, key);
	if (d == NULL)
		return false;
	return exists || name_cmp(d->value, value) == 0;
}

static bool match(const uint8_t *p, const uint8_t *end,
		  const struct xd_dparam *params, size_t n);

/* or_constraints (any) or and_constraints (all); an empty list is
 * false for any and true for all, as the words say. */
static bool match_list(const uint8_t *p, const uint8_t *end, bool all,
		       const struct xd_dparam *params, size_t n)
{
	struct xd_wire_field f;

	while (xd_wire_next(&p, end, &f) == 1) {
		if (f.number != LIST_CONSTRAINTS || f.wt != XD_WT_LEN)
			continue;
		if (match(f.data, f.data + f.len, params, n) != all)
			return !all;
	}
	return all;
}

static bool match(const uint8_t *p, const uint8_t *end,
		  const struct xd_dparam *params, size_t n)
{
	struct xd_wire_field f;

	while (xd_wire_next(&p, end, &f) == 1) {
		const uint8_t *q = f.data, *qe = f.data + f.len;

		if (f.wt != XD_WT_LEN)
			continue;
		switch (f.number) {
		case DPC_SINGLE:
			return match_single(q, qe, params, n);
		case DPC_OR:
			return match_list(q, qe, false, params, n);
		case DPC_AND:
			return match_list(q, qe, true, params, n);
		case DPC_NOT:
			return !match(q, qe, params, n);
		default:
			break;
		}
	}
	return false; /* checked constraints never get here */
}

bool xd_dpc_match(const uint8_t *dpc, size_t len,
		  const struct xd_dparam *params, size_t n)
{
	/* a locator's parameters, bounded where it was read */
	XD_ASSERT(n <= XD_DPARAM_MAX && (n == 0 || params != NULL));
	return match(dpc, len > 0 ? dpc + len : dpc, params, n);
}
