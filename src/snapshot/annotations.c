/* SPDX-License-Identifier: Apache-2.0 */
/* A snapshot resource's annotations (annotations.h): the transcoder's
 * hooks for "@allow", "@ttl", "@dynamic_parameter_constraints", "@name"
 * and "@on_demand", and the bytes they write, read back for the loader.
 *
 * The bytes are protobuf fields (wire/wire.h), in the order read: */
#include "snapshot/annotations.h"

#include <string.h>

#include "util/xalloc.h"
#include "wire/wire.h"
#include "xds/dynparam.h"

enum {
	F_ALLOW_SET = 1,    /* varint 1: "@allow" was given */
	F_ALLOW_ANYONE = 2, /* varint 1: ... with "@anyone" */
	F_ALLOW_GLOB = 3,   /* one glob, its NUL included */
	F_TTL_MS = 4,       /* varint */
	F_DPC = 5,          /* the encoded constraints */
	F_NAME = 6,         /* "@name", its NUL included */
	F_ON_DEMAND = 7,    /* varint 1: "@on_demand": true */
};

#define ANYONE "@anyone"
#define DPC_MESSAGE "envoy.service.discovery.v3.DynamicParameterConstraints"

static void put_varint(struct xd_ann_reader *r, uint32_t field, uint64_t v)
{
	uint8_t b[20], *p = b;

	p = xd_wire_put_varint(p, ((uint64_t)field << 3) | XD_WT_VARINT);
	p = xd_wire_put_varint(p, v);
	xd_ann_write(r, b, (size_t)(p - b));
}

static void put_bytes(struct xd_ann_reader *r, uint32_t field,
		      const void *data, size_t len)
{
	uint8_t b[20], *p = b;

	p = xd_wire_put_varint(p, ((uint64_t)field << 3) | XD_WT_LEN);
	p = xd_wire_put_varint(p, len);
	xd_ann_write(r, b, (size_t)(p - b));
	xd_ann_write(r, data, len);
}

static bool is(const char *s, size_t len, const char *text)
{
	return len == strlen(text) && memcmp(s, text, len) == 0;
}

/* A non-empty string (`what` it is for, and what to say of an empty
 * one): each glob of "@allow", and "@name". */
static bool nonempty_string(struct xd_ann_reader *r, const struct xd_dnode *n,
			    const char *what, const char *empty,
			    const char **s, size_t *len)
{
	char buf[160];

	if (!xd_ann_text(n, s, len)) {
		xd_ann_error(r, n, "expected %s (a string), not %s", what,
			     xd_ann_show(n, buf, sizeof(buf)));
		return false;
	}
	if (xd_ann_check_string(r, n) != 0)
		return false;
	if (*len == 0) {
		xd_ann_error(r, n, "%s", empty);
		return false;
	}
	return true;
}

/* One item of "@allow": a glob, or the keyword "@anyone". */
static void allow_item(struct xd_ann_reader *r, const struct xd_dnode *n)
{
	char buf[160];
	const char *s;
	size_t len;

	if (!nonempty_string(r, n, "an identity glob",
			     "an empty glob matches no identity", &s, &len))
		return;
	if (len > XD_ALLOW_GLOB_MAX) {
		xd_ann_error(r, n, "a glob of %zu bytes; the limit is %d", len,
			     XD_ALLOW_GLOB_MAX);
		return;
	}
	if (s[0] == '@') {
		/* "@" starts keywords, so that none is ever taken for an
		 * identity (a common name may be anything) */
		if (is(s, len, ANYONE))
			put_varint(r, F_ALLOW_ANYONE, 1);
		else
			xd_ann_error(r, n, "unknown keyword %s (the only one is '" ANYONE "')",
				     xd_ann_show(n, buf, sizeof(buf)));
		return;
	}
	put_bytes(r, F_ALLOW_GLOB, s, len + 1);
}

static void read_allow(struct xd_ann_reader *r, const struct xd_dnode *v,
		       void *ctx)
{
	char buf[160];
	size_t count;

	(void)ctx;
	put_varint(r, F_ALLOW_SET, 1);
	if (!xd_ann_list(v, &count)) {
		xd_ann_error(r, v, "expected a list of identity globs, not %s",
			     xd_ann_show(v, buf, sizeof(buf)));
		return;
	}
	if (count > XD_ALLOW_MAX) {
		xd_ann_error(r, v, "%zu globs; the limit is %d", count,
			     XD_ALLOW_MAX);
		return;
	}
	for (size_t i = 0; i < count && !xd_ann_stopped(r); i++) {
		xd_ann_push_index(r, i);
		allow_item(r, xd_ann_list_item(v, i));
		xd_ann_pop(r);
	}
}

/* "@ttl": a Duration string, as the snapshot's other durations are. */
static void read_ttl(struct xd_ann_reader *r, const struct xd_dnode *v,
		     void *ctx)
{
	int64_t secs = 0;
	int32_t nanos = 0;
	char buf[160];

	(void)ctx;
	if (!xd_ann_duration(v, &secs, &nanos)) {
		xd_ann_error(r, v, "expected a duration such as \"30s\", not %s",
			     xd_ann_show(v, buf, sizeof(buf)));
		return;
	}
	if (nanos % 1000000 != 0) {
		xd_ann_error(r, v, "a TTL is counted in whole milliseconds, not %s",
			     xd_ann_show(v, buf, sizeof(buf)));
		return;
	}
	if (secs < 0 || nanos < 0 ||
	    secs * 1000 + nanos / 1000000 < (int64_t)XD_TTL_MIN_MS ||
	    secs > (int64_t)(XD_TTL_MAX_MS / 1000) ||
	    secs * 1000 + nanos / 1000000 > (int64_t)XD_TTL_MAX_MS) {
		xd_ann_error(r, v, "a TTL of %s; it must be from 1s to 30 days (%us)",
			     xd_ann_show(v, buf, sizeof(buf)),
			     XD_TTL_MAX_MS / 1000);
		return;
	}
	put_varint(r, F_TTL_MS, (uint64_t)(secs * 1000 + nanos / 1000000));
}

/* "@dynamic_parameter_constraints" (rule P1): encoded as the message
 * DynamicParameterConstraints through the schema, so that its errors
 * are those of any field, then checked for what the schema does not
 * say (xd_dpc_check). */
static void read_dpc(struct xd_ann_reader *r, const struct xd_dnode *v,
		     void *ctx)
{
	const uint8_t *data;
	const char *why;
	size_t len;

	(void)ctx;
	if (xd_ann_encode(r, DPC_MESSAGE, v, &data, &len) != 0)
		return;
	why = xd_dpc_check(data, len);
	if (why != NULL) {
		xd_ann_error(r, v, "%s", why);
		return;
	}
	put_bytes(r, F_DPC, data, len);
}

/* "@name": a resource's name where its message has none (a list
 * collection's); what a good one is, the loader says. */
static void read_name(struct xd_ann_reader *r, const struct xd_dnode *v,
		      void *ctx)
{
	const char *s;
	size_t len;

	(void)ctx;
	if (nonempty_string(r, v, "a name", "an empty name", &s, &len))
		put_bytes(r, F_NAME, s, len + 1);
}

/* "@on_demand": a boolean; where it may stand, the loader says. */
static void read_on_demand(struct xd_ann_reader *r, const struct xd_dnode *v,
			   void *ctx)
{
	char buf[160];
	bool on;

	(void)ctx;
	if (!xd_ann_bool(v, &on)) {
		xd_ann_error(r, v, "expected true or false, not %s",
			     xd_ann_show(v, buf, sizeof(buf)));
		return;
	}
	if (on)
		put_varint(r, F_ON_DEMAND, 1);
}

/* In this order in "unknown annotation" messages. */
static const struct xd_ann_hook hook[] = {
	{"@allow", read_allow, false},
	{"@ttl", read_ttl, false},
	{"@dynamic_parameter_constraints", read_dpc, true},
	{"@name", read_name, false},
	{"@on_demand", read_on_demand, false},
};

static const struct xd_ann_hooks hooks = {
	hook, sizeof(hook) / sizeof(hook[0]), NULL};

const struct xd_ann_hooks *xd_annotations_hooks(void)
{
	return &hooks;
}

/* A string field: its bytes end with the NUL the hook wrote. */
static const char *text_of(const struct xd_wire_field *f)
{
	XD_ASSERT(f->wt == XD_WT_LEN && f->len > 0 &&
		  f->data[f->len - 1] == '\0');
	return (const char *)f->data;
}

void xd_annotations_read(const uint8_t *ann, size_t len,
			 struct xd_annotations *out)
{
	const uint8_t *p = ann, *end;
	struct xd_wire_field f;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return; /* and `ann` may be NULL */
	end = ann + len;
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		switch (f.number) {
		case F_ALLOW_SET:
			out->allow_set = true;
			break;
		case F_ALLOW_ANYONE:
			out->allow_anyone = true;
			break;
		case F_ALLOW_GLOB:
			/* read_allow refused more */
			XD_ASSERT(out->nallow < XD_ALLOW_MAX);
			out->allow[out->nallow++] = text_of(&f);
			break;
		case F_TTL_MS:
			XD_ASSERT(f.v >= XD_TTL_MIN_MS && f.v <= XD_TTL_MAX_MS);
			out->ttl_ms = (uint32_t)f.v;
			break;
		case F_DPC:
			XD_ASSERT(f.wt == XD_WT_LEN && f.len > 0);
			out->dpc = f.data;
			out->dpc_len = f.len;
			break;
		case F_NAME:
			out->name = text_of(&f);
			break;
		case F_ON_DEMAND:
			out->on_demand = true;
			break;
		default:
			XD_ASSERT_INFO(0, "annotation field %u", (unsigned)f.number);
		}
	}
	/* written by the hooks above, never from outside */
	XD_ASSERT(rc == 0);
}
