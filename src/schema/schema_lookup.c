/* SPDX-License-Identifier: Apache-2.0 */
/* Lookups in the loaded tables, suggestions for misspellings, names. */
#include "schema/schema_int.h"

#include <string.h>

#include "wire/wire.h"
#include "util/text.h"
#include "util/xalloc.h"

/* Names are compared with strncmp, which stops at a NUL of either: a
 * name with a NUL inside matches nothing. */
const struct xd_msgdesc *xd_schema_message_n(const struct xd_schema *s,
					     const char *name, size_t len)
{
	uint32_t h = xd_text_hash(name, len) & s->msg_mask;

	if (memchr(name, '\0', len) != NULL)
		return NULL;
	for (uint32_t i; (i = s->msg_slots[h]) != 0; h = (h + 1) & s->msg_mask) {
		const char *n = s->msgs[i - 1].full_name;

		if (strncmp(n, name, len) == 0 && n[len] == '\0')
			return &s->msgs[i - 1];
	}
	return NULL;
}

const struct xd_enumdesc *xd_schema_enum_n(const struct xd_schema *s,
					   const char *name, size_t len)
{
	uint32_t h = xd_text_hash(name, len) & s->enum_mask;

	if (memchr(name, '\0', len) != NULL)
		return NULL;
	for (uint32_t i; (i = s->enum_slots[h]) != 0;
	     h = (h + 1) & s->enum_mask) {
		const char *n = s->enums[i - 1].full_name;

		if (strncmp(n, name, len) == 0 && n[len] == '\0')
			return &s->enums[i - 1];
	}
	return NULL;
}

/* ---- lookups ---- */

const struct xd_msgdesc *xd_schema_find_message(const struct xd_schema *s,
						const char *full_name)
{
	return xd_schema_message_n(s, full_name, strlen(full_name));
}

const struct xd_enumdesc *xd_schema_find_enum(const struct xd_schema *s,
					      const char *full_name)
{
	return xd_schema_enum_n(s, full_name, strlen(full_name));
}

const struct xd_msgdesc *xd_schema_find_type_url(const struct xd_schema *s,
						 const char *url, size_t len)
{
	const char *slash;

	if (len == 0)
		return NULL;
	slash = memrchr(url, '/', len);
	if (slash != NULL) {
		len -= (size_t)(slash + 1 - url);
		url = slash + 1;
	}
	if (len == 0)
		return NULL;
	return xd_schema_message_n(s, url, len);
}

const struct xd_msgdesc *xd_schema_wkt(const struct xd_schema *s,
				       enum xd_wkt w)
{
	XD_ASSERT_INFO((unsigned)w < XD_WKT_COUNT, "well-known type %d", (int)w);
	return s->wkt[w];
}

const struct xd_enumdesc *xd_schema_null_value(const struct xd_schema *s)
{
	return s->null_value;
}

const char *xd_schema_message_name(const struct xd_msgdesc *m)
{
	return m->full_name;
}

size_t xd_schema_message_count(const struct xd_schema *s)
{
	return s->nmsgs;
}

size_t xd_schema_enum_count(const struct xd_schema *s)
{
	return s->nenums;
}

const struct xd_fielddesc *xd_schema_field_by_name(const struct xd_msgdesc *m,
						   const char *name, size_t len)
{
	uint32_t h = xd_text_hash(name, len) & m->name_mask;

	if (m->nfields == 0)
		return NULL;
	for (uint16_t i; (i = m->name_slots[h]) != 0;
	     h = (h + 1) & m->name_mask) {
		const struct xd_fielddesc *f = &m->fields[i - 1];

		if ((f->name_len == len && memcmp(f->name, name, len) == 0) ||
		    (f->json_len == len && memcmp(f->json_name, name, len) == 0))
			return f;
	}
	return NULL;
}

const struct xd_fielddesc *xd_schema_field_by_number(const struct xd_msgdesc *m,
						     uint32_t number)
{
	uint32_t lo = 0, hi = m->nfields;

	if (number < m->ndense) {
		uint16_t k = m->by_number[number];

		/* the dense index names the field of that number, or none */
		XD_ASSERT_INFO(k <= m->nfields &&
				       (k == 0 || m->fields[k - 1].number == number),
			       "%s field %u", m->full_name, number);
		return k ? &m->fields[k - 1] : NULL;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->fields[mid].number == number)
			return &m->fields[mid];
		if (m->fields[mid].number < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct xd_enumval *xd_schema_enum_by_name(const struct xd_enumdesc *e,
						const char *name, size_t len)
{
	uint32_t h = xd_text_hash(name, len) & e->name_mask;

	for (uint16_t i; (i = e->name_slots[h]) != 0;
	     h = (h + 1) & e->name_mask) {
		const struct xd_enumval *v = &e->values[i - 1];

		if (v->name_len == len && memcmp(v->name, name, len) == 0)
			return v;
	}
	return NULL;
}

const struct xd_enumval *xd_schema_enum_by_number(const struct xd_enumdesc *e,
						  int32_t number)
{
	uint32_t lo = 0, hi = e->nnumbers;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct xd_enumval *v;

		XD_ASSERT_INFO(e->by_number[mid] < e->nvalues, "%s value %d",
			       e->full_name, number);
		v = &e->values[e->by_number[mid]];

		if (v->number == number)
			return v;
		if (v->number < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- suggestions ---- */

/* Case-insensitive, so that "LbPolicy" finds "lbPolicy", and a swap of
 * neighbours is one edit ("nmae" is one from "name"). */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	return xd_text_distance(a, la, b, lb, XD_TEXT_FOLD_CASE | XD_TEXT_SWAPS);
}

/* Close: at most a third of the name differs (and at least one edit is
 * allowed). The limit is exclusive. */
static size_t closeness_limit(size_t len)
{
	return (len / 3 > 1 ? len / 3 : 1) + 1;
}

const char *xd_schema_suggest_field(const struct xd_msgdesc *m,
				    const char *name, size_t len)
{
	const char *best = NULL;
	size_t best_d = closeness_limit(len);

	for (uint32_t i = 0; i < m->nfields; i++) {
		const struct xd_fielddesc *f = &m->fields[i];
		size_t d = distance(name, len, f->name, f->name_len);
		size_t dj = distance(name, len, f->json_name, f->json_len);

		if (dj < d) {
			d = dj;
			if (d < best_d) {
				best_d = d;
				best = f->json_name;
			}
		} else if (d < best_d) {
			best_d = d;
			best = f->name;
		}
	}
	return best;
}

const char *xd_schema_suggest_enum(const struct xd_enumdesc *e,
				   const char *name, size_t len)
{
	const char *best = NULL;
	size_t best_d = closeness_limit(len);

	for (uint32_t i = 0; i < e->nvalues; i++) {
		size_t d = distance(name, len, e->values[i].name,
				    e->values[i].name_len);

		if (d < best_d) {
			best_d = d;
			best = e->values[i].name;
		}
	}
	return best;
}

const char *xd_schema_suggest_message(const struct xd_schema *s,
				      const char *name, size_t len)
{
	const char *dot = memrchr(name, '.', len), *best = NULL;
	size_t plen, best_d;

	/* Among the types of the same package: a misspelt type name is
	 * likely, a misspelt package too, but then nothing is close. */
	if (dot == NULL)
		return NULL;
	plen = (size_t)(dot - name) + 1;
	best_d = closeness_limit(len - plen);
	for (uint32_t i = 0; i < s->nmsgs; i++) {
		const char *full = s->msgs[i].full_name;
		size_t flen = strlen(full), d;

		if (flen <= plen || strncmp(full, name, plen) != 0 ||
		    memchr(full + plen, '.', flen - plen) != NULL)
			continue;
		d = distance(name + plen, len - plen, full + plen, flen - plen);
		if (d < best_d) {
			best_d = d;
			best = full;
		}
	}
	return best;
}

const char *xd_schema_type_name(enum xd_ftype t)
{
	static const char *const names[] = {
		[XD_T_DOUBLE] = "double",     [XD_T_FLOAT] = "float",
		[XD_T_INT64] = "int64",       [XD_T_UINT64] = "uint64",
		[XD_T_INT32] = "int32",       [XD_T_FIXED64] = "fixed64",
		[XD_T_FIXED32] = "fixed32",   [XD_T_BOOL] = "bool",
		[XD_T_STRING] = "string",     [XD_T_GROUP] = "group",
		[XD_T_MESSAGE] = "message",   [XD_T_BYTES] = "bytes",
		[XD_T_UINT32] = "uint32",     [XD_T_ENUM] = "enum",
		[XD_T_SFIXED32] = "sfixed32", [XD_T_SFIXED64] = "sfixed64",
		[XD_T_SINT32] = "sint32",     [XD_T_SINT64] = "sint64",
	};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) && names[t] ?
		       names[t] :
		       "unknown";
}

uint8_t xd_schema_wiretype(uint8_t t)
{
	switch (t) {
	case XD_T_FIXED32:
	case XD_T_SFIXED32:
	case XD_T_FLOAT:
		return XD_WT_I32;
	case XD_T_FIXED64:
	case XD_T_SFIXED64:
	case XD_T_DOUBLE:
		return XD_WT_I64;
	case XD_T_STRING:
	case XD_T_BYTES:
	case XD_T_MESSAGE:
		return XD_WT_LEN;
	case XD_T_GROUP:
		return XD_WT_SGROUP;
	default:
		return XD_WT_VARINT;
	}
}
