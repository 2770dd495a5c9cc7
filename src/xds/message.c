/* SPDX-License-Identifier: Apache-2.0 */
#include "xds/message.h"

#include <stdio.h>
#include <string.h>

#include "util/xalloc.h"
#include "wire/wire.h"

static size_t tag_size(uint32_t number)
{
	return xd_wire_varint_size((uint64_t)number << 3);
}

size_t xd_msg_field_size(uint32_t number, size_t len)
{
	return tag_size(number) + xd_wire_varint_size(len) + len;
}

uint8_t *xd_msg_put_header(uint8_t *p, uint32_t number, size_t len)
{
	/* protobuf's field numbers: 1 to 2^29 - 1 */
	XD_ASSERT_INFO(number > 0 && number < (1u << 29), "field %u", number);
	p = xd_wire_put_varint(p, ((uint64_t)number << 3) | XD_WT_LEN);
	return xd_wire_put_varint(p, len);
}

uint8_t *xd_msg_put_bytes(uint8_t *p, uint32_t number, const void *data,
			  size_t len)
{
	p = xd_msg_put_header(p, number, len);
	if (len > 0)
		memcpy(p, data, len);
	return p + len;
}

static size_t name_field(uint32_t number, struct xd_name n)
{
	return xd_msg_field_size(number, n.len);
}

/* ---------------- Any ---------------- */

size_t xd_any_size(const char *type_url, size_t len)
{
	return xd_msg_field_size(XD_ANY_TYPE_URL, strlen(type_url)) +
	       xd_msg_field_size(XD_ANY_VALUE, len);
}

uint8_t *xd_any_put(uint8_t *p, const char *type_url, const void *value,
		    size_t len)
{
	p = xd_msg_put_bytes(p, XD_ANY_TYPE_URL, type_url, strlen(type_url));
	return xd_msg_put_bytes(p, XD_ANY_VALUE, value, len);
}

/* ---------------- Resource ---------------- */

/* A Duration of `ms` milliseconds, without its field header. */
static size_t duration_size(uint32_t ms)
{
	size_t n = 0;

	if (ms / 1000 > 0)
		n += tag_size(XD_DURATION_SECONDS) + xd_wire_varint_size(ms / 1000);
	if (ms % 1000 > 0)
		n += tag_size(XD_DURATION_NANOS) +
		     xd_wire_varint_size((uint64_t)(ms % 1000) * 1000000);
	return n;
}

static uint8_t *duration_put(uint8_t *p, uint32_t ms)
{
	if (ms / 1000 > 0) {
		p = xd_wire_put_varint(p, (uint64_t)XD_DURATION_SECONDS << 3 |
						  XD_WT_VARINT);
		p = xd_wire_put_varint(p, ms / 1000);
	}
	if (ms % 1000 > 0) {
		p = xd_wire_put_varint(p, (uint64_t)XD_DURATION_NANOS << 3 |
						  XD_WT_VARINT);
		p = xd_wire_put_varint(p, (uint64_t)(ms % 1000) * 1000000);
	}
	return p;
}

/* ResourceName {name, dynamic_parameter_constraints} (rule P1): its
 * body, and the whole field `number` holding it. */
static size_t resource_name_size(struct xd_name name, struct xd_span dpc)
{
	return name_field(XD_RESOURCE_NAME_NAME, name) +
	       xd_msg_field_size(XD_RESOURCE_NAME_CONSTRAINTS, dpc.len);
}

static uint8_t *resource_name_put(uint8_t *p, uint32_t number,
				  struct xd_name name, struct xd_span dpc)
{
	p = xd_msg_put_header(p, number, resource_name_size(name, dpc));
	p = xd_msg_put_bytes(p, XD_RESOURCE_NAME_NAME, name.data, name.len);
	return xd_msg_put_bytes(p, XD_RESOURCE_NAME_CONSTRAINTS, dpc.data,
				dpc.len);
}

size_t xd_resource_size(const struct xd_resource *r)
{
	size_t n = 0;

	if (r->version.len > 0)
		n += name_field(XD_RESOURCE_VERSION, r->version);
	if (r->type_url != NULL)
		n += xd_msg_field_size(XD_RESOURCE_RESOURCE,
				       xd_any_size(r->type_url, r->body.len));
	if (r->constraints.data != NULL)
		n += xd_msg_field_size(XD_RESOURCE_RESOURCE_NAME,
				       resource_name_size(r->name,
							  r->constraints));
	else
		n += name_field(XD_RESOURCE_NAME, r->name);
	for (size_t i = 0; i < r->naliases; i++)
		n += xd_msg_field_size(XD_RESOURCE_ALIASES, strlen(r->aliases[i]));
	if (r->ttl_ms > 0)
		n += xd_msg_field_size(XD_RESOURCE_TTL, duration_size(r->ttl_ms));
	return n;
}

uint8_t *xd_resource_put(uint8_t *p, const struct xd_resource *r)
{
	uint8_t *start = p;

	if (r->version.len > 0)
		p = xd_msg_put_bytes(p, XD_RESOURCE_VERSION, r->version.data,
				     r->version.len);
	if (r->type_url != NULL) {
		p = xd_msg_put_header(p, XD_RESOURCE_RESOURCE,
				      xd_any_size(r->type_url, r->body.len));
		p = xd_any_put(p, r->type_url, r->body.data, r->body.len);
	}
	if (r->constraints.data != NULL)
		p = resource_name_put(p, XD_RESOURCE_RESOURCE_NAME, r->name,
				      r->constraints);
	else
		p = xd_msg_put_bytes(p, XD_RESOURCE_NAME, r->name.data,
				     r->name.len);
	for (size_t i = 0; i < r->naliases; i++)
		p = xd_msg_put_bytes(p, XD_RESOURCE_ALIASES, r->aliases[i],
				     strlen(r->aliases[i]));
	if (r->ttl_ms > 0) {
		p = xd_msg_put_header(p, XD_RESOURCE_TTL,
				      duration_size(r->ttl_ms));
		p = duration_put(p, r->ttl_ms);
	}
	/* the two passes agree, or the header before it lied (tables are
	 * encoded at load: the second pass costs nothing per response) */
	XD_ASSERT_INFO((size_t)(p - start) == xd_resource_size(r),
		       "resource '%.*s'", (int)r->name.len, r->name.data);
	return p;
}

/* ---------------- responses ---------------- */

/*
 * A subscribed name that does not exist (rule D8), as Envoy reads it: in
 * removed_resources, or for an alias (`by_alias`, rule D10) a Resource
 * without a body that carries the name as its own alias.
 */
static size_t alias_only_size(struct xd_name n)
{
	return name_field(XD_RESOURCE_NAME, n) + name_field(XD_RESOURCE_ALIASES, n);
}

static size_t missing_size(struct xd_name n, bool by_alias)
{
	if (!by_alias)
		return name_field(XD_DELTA_RESPONSE_REMOVED, n);
	return xd_msg_field_size(XD_RESPONSE_RESOURCES, alias_only_size(n));
}

size_t xd_response_size(const struct xd_response *r)
{
	size_t n = name_field(XD_RESPONSE_VERSION_INFO, r->version) +
		   name_field(XD_RESPONSE_TYPE_URL, r->type_url);

	for (size_t i = 0; i < r->nresources; i++)
		n += r->resources[i].len;
	for (size_t i = 0; i < r->nmissing; i++)
		n += missing_size(r->missing[i], r->missing_by_alias);
	for (size_t i = 0; i < r->nremoved; i++)
		n += name_field(XD_DELTA_RESPONSE_REMOVED, r->removed[i]);
	for (size_t i = 0; i < r->nremoved_variants; i++)
		n += xd_msg_field_size(
			XD_DELTA_RESPONSE_REMOVED_NAMES,
			resource_name_size(r->removed_variants[i].name,
					   r->removed_variants[i].constraints));
	return n;
}

uint8_t *xd_response_put(uint8_t *p, const struct xd_response *r)
{
	p = xd_msg_put_bytes(p, XD_RESPONSE_VERSION_INFO, r->version.data,
			     r->version.len);
	for (size_t i = 0; i < r->nresources; i++) {
		memcpy(p, r->resources[i].data, r->resources[i].len);
		p += r->resources[i].len;
	}
	for (size_t i = 0; r->missing_by_alias && i < r->nmissing; i++) {
		struct xd_name n = r->missing[i];

		p = xd_msg_put_header(p, XD_RESPONSE_RESOURCES, alias_only_size(n));
		p = xd_msg_put_bytes(p, XD_RESOURCE_NAME, n.data, n.len);
		p = xd_msg_put_bytes(p, XD_RESOURCE_ALIASES, n.data, n.len);
	}
	p = xd_msg_put_bytes(p, XD_RESPONSE_TYPE_URL, r->type_url.data,
			     r->type_url.len);
	for (size_t i = 0; i < r->nremoved; i++)
		p = xd_msg_put_bytes(p, XD_DELTA_RESPONSE_REMOVED,
				     r->removed[i].data, r->removed[i].len);
	for (size_t i = 0; !r->missing_by_alias && i < r->nmissing; i++)
		p = xd_msg_put_bytes(p, XD_DELTA_RESPONSE_REMOVED,
				     r->missing[i].data, r->missing[i].len);
	for (size_t i = 0; i < r->nremoved_variants; i++)
		p = resource_name_put(p, XD_DELTA_RESPONSE_REMOVED_NAMES,
				      r->removed_variants[i].name,
				      r->removed_variants[i].constraints);
	return p;
}

size_t xd_response_put_nonce(uint8_t p[XD_RESPONSE_NONCE_MAX], uint64_t nonce)
{
	char digits[21];
	int n = snprintf(digits, sizeof(digits), "%llu",
			 (unsigned long long)nonce);

	XD_ASSERT(n > 0 && n <= 20); /* XD_RESPONSE_NONCE_MAX's bound */
	return (size_t)(xd_msg_put_bytes(p, XD_RESPONSE_NONCE, digits,
					 (size_t)n) - p);
}
