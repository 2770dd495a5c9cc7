/* SPDX-License-Identifier: Apache-2.0 */
#include "rest/printed.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "schema/pbjson.h"
#include "util/buf.h"
#include "util/common.h"
#include "util/list.h"
#include "util/xalloc.h"

#define PRINTED_MAX_ENTRIES 64
#define PRINTED_MAX_BYTES ((size_t)256 << 20)

struct entry {
	struct xd_rest_json *json;
	struct xd_list link; /* least recently used first */
};

struct xd_rest_printed {
	const struct xd_schema *schema;
	const struct xd_msgdesc *response;
	struct xd_list lru;
	size_t count, bytes;
	unsigned long long printed;
};

struct xd_rest_printed *xd_rest_printed_new(const struct xd_schema *schema,
					    const struct xd_msgdesc *response)
{
	struct xd_rest_printed *p = xd_calloc(1, sizeof(*p));

	p->schema = schema;
	p->response = response;
	xd_list_init(&p->lru);
	return p;
}

void xd_rest_json_unref(struct xd_rest_json *j)
{
	if (!XD_UNREF(j->refs))
		return;
	if (j->body != NULL)
		xd_body_unref(j->body);
	free(j->text);
	free(j);
}

static void evict(struct xd_rest_printed *p, struct entry *e)
{
	/* the bounds are kept on what is counted here */
	XD_ASSERT_INFO(p->count > 0 && p->bytes >= e->json->len,
		       "%zu printed answers of %zu bytes, evicting %zu",
		       p->count, p->bytes, e->json->len);
	xd_list_remove(&e->link);
	p->count--;
	p->bytes -= e->json->len;
	xd_rest_json_unref(e->json);
	free(e);
}

void xd_rest_printed_free(struct xd_rest_printed *p)
{
	while (!xd_list_empty(&p->lru))
		evict(p, xd_container_of(p->lru.next, struct entry, link));
	free(p);
}

static int dump_to_buf(const char *data, size_t len, void *arg)
{
	xd_buf_append(arg, data, len);
	return 0;
}

static struct xd_rest_json *print(struct xd_rest_printed *p,
				  const uint8_t *data, size_t len,
				  struct xd_diag *diag)
{
	json_t *v = xd_pbjson_print(p->schema, p->response, data, len,
				    XD_PBJSON_CAMEL, diag);
	struct xd_buf out = XD_BUF_INIT;
	struct xd_rest_json *j;

	if (v == NULL)
		return NULL;
	json_dump_callback(v, dump_to_buf, &out, JSON_COMPACT);
	json_decref(v);
	/* jansson prints an object as "{...}": keep all but the brace */
	XD_ASSERT(out.len >= 2 && out.data[out.len - 1] == '}');
	j = xd_calloc(1, sizeof(*j));
	j->refs = 1;
	j->len = out.len - 1;
	j->empty = out.len == 2;
	j->text = (char *)xd_buf_steal(&out, &len);
	p->printed++;
	return j;
}

struct xd_rest_json *xd_rest_printed_get(struct xd_rest_printed *p,
					 struct xd_body *body,
					 const uint8_t *data, size_t len,
					 struct xd_diag *diag)
{
	struct xd_list *l;
	struct entry *e;
	struct xd_rest_json *j;

	if (body == NULL)
		return print(p, data, len, diag);
	xd_list_for_each(l, &p->lru) {
		e = xd_container_of(l, struct entry, link);
		if (e->json->body == body) {
			xd_list_remove(&e->link);
			xd_list_push_back(&p->lru, &e->link);
			e->json->refs++;
			return e->json;
		}
	}
	j = print(p, data, len, diag);
	if (j == NULL)
		return NULL;
	j->body = xd_body_ref(body);
	while (p->count > 0 && (p->count >= PRINTED_MAX_ENTRIES ||
				p->bytes + j->len > PRINTED_MAX_BYTES))
		evict(p, xd_container_of(p->lru.next, struct entry, link));
	e = xd_calloc(1, sizeof(*e));
	e->json = j;
	j->refs++; /* the cache's */
	xd_list_push_back(&p->lru, &e->link);
	p->count++;
	p->bytes += j->len;
	/* one entry may be larger than the byte bound alone; never more */
	XD_ASSERT_INFO(p->count <= PRINTED_MAX_ENTRIES &&
			       (p->count == 1 || p->bytes <= PRINTED_MAX_BYTES),
		       "%zu printed answers of %zu bytes", p->count, p->bytes);
	return j;
}

unsigned long long xd_rest_printed_count(const struct xd_rest_printed *p)
{
	return p->printed;
}
