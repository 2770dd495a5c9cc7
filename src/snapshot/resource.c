/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/resource.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "wire/wire.h"
#include "util/buf.h"
#include "util/xalloc.h"
#include "xds/xdstp.h"

struct walk {
	const struct xd_schema *s;
	const struct xd_msgdesc *sds; /* SdsSecretConfig, for add_sds_ref */
	struct xd_resinfo *r;
	size_t cap_refs, cap_aliases;
	enum xd_rtype to;      /* type of the references being collected */
	char *first;           /* a string field's first value */
	bool nul;              /* it held a NUL byte */
	const char *prefix;    /* VHDS: "<route configuration>" */
	size_t prefix_len;
};

/*
 * Where a listener's or a cluster's TLS contexts (DownstreamTlsContext,
 * UpstreamTlsContext, inside the transport socket's Any) name secrets:
 * every transport socket, by every SdsSecretConfig field of the
 * context or of its CommonTlsContext. A name counts only when its
 * sds_config is `ads` or `self`, the server the listener or cluster
 * came from: one with no sds_config is a static secret of Envoy's own
 * bootstrap, and one with an api_config_source comes from another SDS
 * server (a local agent, say), neither of which the snapshot holds.
 */
static const struct {
	enum xd_rtype from;
	const char *path; /* to a transport socket's typed_config */
} tls_contexts[] = {
	{XD_LISTENER, "filter_chains.transport_socket.typed_config"},
	{XD_LISTENER, "default_filter_chain.transport_socket.typed_config"},
	{XD_CLUSTER, "transport_socket.typed_config"},
	{XD_CLUSTER, "transport_socket_matches.transport_socket.typed_config"},
};

static const char *const sds_fields[] = {
	"common_tls_context.tls_certificate_sds_secret_configs",
	"common_tls_context.validation_context_sds_secret_config",
	"common_tls_context.combined_validation_context.validation_context_sds_secret_config",
	"session_ticket_keys_sds_secret_config", /* downstream only */
};

#define SDS_SECRET_CONFIG "envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig"

static void take_first(const uint8_t *value, size_t len, void *arg)
{
	struct walk *w = arg;

	if (w->first != NULL || w->nul)
		return;
	if (memchr(value, '\0', len) != NULL) {
		w->nul = true;
		return;
	}
	w->first = xd_strndup((const char *)value, len);
}

static void add_ref(const uint8_t *value, size_t len, void *arg)
{
	struct walk *w = arg;
	struct xd_resinfo *r = w->r;

	if (len == 0 || memchr(value, '\0', len) != NULL)
		return;
	if (r->nrefs == w->cap_refs) {
		w->cap_refs = w->cap_refs ? w->cap_refs * 2 : 8;
		r->refs = xd_realloc(r->refs, w->cap_refs * sizeof(*r->refs));
	}
	r->refs[r->nrefs].type = w->to;
	r->refs[r->nrefs++].name = xd_strndup((const char *)value, len);
}

static void add_alias(const uint8_t *value, size_t len, void *arg)
{
	struct walk *w = arg;
	struct xd_resinfo *r = w->r;
	char *alias;

	if (memchr(value, '\0', len) != NULL)
		return;
	alias = xd_asprintf("%.*s/%.*s", (int)w->prefix_len, w->prefix,
			    (int)len, (const char *)value);
	if (r->naliases == w->cap_aliases) {
		w->cap_aliases = w->cap_aliases ? w->cap_aliases * 2 : 8;
		r->aliases = xd_realloc(r->aliases, w->cap_aliases * sizeof(char *));
	}
	r->aliases[r->naliases++] = alias;
}

static void count_visit(const uint8_t *value, size_t len, void *arg)
{
	(void)value;
	(void)len;
	(*(size_t *)arg)++;
}

/* One SdsSecretConfig: its name a reference to a secret of the
 * snapshot when its sds_config is ADS or `self` (tls_contexts). */
static void add_sds_ref(const uint8_t *value, size_t len, void *arg)
{
	struct walk *w = arg;
	size_t ours = 0;
	char *name;

	xd_schema_walk(w->s, w->sds, value, len, "sds_config.ads", count_visit,
		       &ours);
	xd_schema_walk(w->s, w->sds, value, len, "sds_config.self", count_visit,
		       &ours);
	if (ours == 0)
		return;
	w->first = NULL;
	w->nul = false;
	xd_schema_walk(w->s, w->sds, value, len, "name", take_first, w);
	name = w->first;
	w->first = NULL;
	if (name != NULL)
		add_ref((const uint8_t *)name, strlen(name), w);
	free(name);
}

/* The secrets a listener's or cluster's TLS contexts ask the snapshot
 * for (tls_contexts). */
static void add_sds_refs(struct walk *w, const struct xd_msgdesc *m,
			 enum xd_rtype t, const uint8_t *data, size_t len)
{
	char path[256];

	w->sds = xd_schema_find_message(w->s, SDS_SECRET_CONFIG);
	if (w->sds == NULL) /* an API without TLS: nothing names a secret */
		return;
	w->to = XD_SECRET;
	for (size_t i = 0; i < sizeof(tls_contexts) / sizeof(tls_contexts[0]); i++) {
		if (tls_contexts[i].from != t)
			continue;
		for (size_t k = 0; k < sizeof(sds_fields) / sizeof(sds_fields[0]); k++) {
			snprintf(path, sizeof(path), "%s.%s", tls_contexts[i].path,
				 sds_fields[k]);
			xd_schema_walk(w->s, m, data, len, path, add_sds_ref, w);
		}
	}
}

static void varint_visit(const uint8_t *value, size_t len, void *arg)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len && i < 10; i++)
		v |= (uint64_t)(value[i] & 0x7f) << (7 * i);
	*(uint64_t *)arg = v;
}

static int by_ref(const void *pa, const void *pb)
{
	const struct xd_ref *a = pa, *b = pb;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Sorted, without repeats: a route configuration of 10,000 virtual hosts
 * names many clusters many times. */
static void unique(struct xd_resinfo *r)
{
	size_t u = 0;

	if (r->nrefs > 1) /* qsort(NULL, 0) is undefined */
		qsort(r->refs, r->nrefs, sizeof(*r->refs), by_ref);
	for (size_t i = 0; i < r->nrefs; i++) {
		if (u > 0 && by_ref(&r->refs[u - 1], &r->refs[i]) == 0)
			free((char *)r->refs[i].name);
		else
			r->refs[u++] = r->refs[i];
	}
	r->nrefs = u;
}

/*
 * An xdstp:// name (rule X1) of a resource of type `t`, in place: its
 * canonical form (xds/xdstp.h), so that lookups by any spelling of it
 * are exact. A resource's own name is a URN: it names its own type and
 * has no directives and no glob; a reference may carry directives (the
 * client acts on them; it asks for the name without them). Other names
 * are left alone. Returns 0, or -1 with the reason in `why`.
 */
static int canon_name(char **name, bool *renamed, enum xd_rtype t, bool own,
		      char *why, size_t whylen)
{
	const char *message = xd_rtype_info(t)->message, *reason;
	struct xd_xdstp_parts pt;
	size_t len;
	char *c;

	if (!xd_xdstp_is(*name, strlen(*name))) {
		if (!xd_rtype_info(t)->by_glob)
			return 0;
		/* found only through glob collections, which are xdstp */
		snprintf(why, whylen, "'%s' is not an xdstp:// name: a %s is named xdstp://<authority>/%s/<path>/<id>%s",
			 *name, xd_rtype_info(t)->noun, message,
			 own ? "" : ", a collection of them by <path>/*");
		return -1;
	}
	c = xd_xdstp_canon(*name, strlen(*name), &len, &pt, &reason);
	if (c == NULL) {
		snprintf(why, whylen, "'%s' is not a valid xdstp:// name: %s",
			 *name, reason);
		return -1;
	}
	if (pt.type_len != strlen(message) ||
	    memcmp(c + pt.type, message, pt.type_len) != 0)
		snprintf(why, whylen, "'%s' names the type %.*s, not %s",
			 *name, (int)pt.type_len, c + pt.type, message);
	else if (pt.glob && (own || !xd_rtype_info(t)->by_glob))
		snprintf(why, whylen, "'%s' is a glob collection, not the name of a resource",
			 *name);
	else if (!own && !pt.glob && xd_rtype_info(t)->by_glob)
		/* LEDS: a locality takes every endpoint of a collection */
		snprintf(why, whylen, "'%s' names one %s, not a glob collection of them (xdstp://<authority>/%s/<path>/*)",
			 *name, xd_rtype_info(t)->noun, message);
	else if (own && pt.fragment)
		snprintf(why, whylen, "the name '%s' has a '#' fragment: directives belong in references, not in names",
			 *name);
	else
		goto good;
	free(c);
	return -1;
good:
	if (own && strcmp(c, *name) != 0)
		*renamed = true;
	free(*name);
	*name = c;
	return 0;
}

/* The xdstp names among the references, in canonical form (before they
 * are sorted and made unique: two spellings are one reference). */
static int canon_refs(struct xd_resinfo *r, char *why, size_t whylen)
{
	for (size_t i = 0; i < r->nrefs; i++) {
		char *n = (char *)r->refs[i].name;
		char inner[400];

		if (canon_name(&n, NULL, r->refs[i].type, false, inner,
			       sizeof(inner)) != 0) {
			snprintf(why, whylen, "%s reference: %s",
				 xd_rtype_info(r->refs[i].type)->noun, inner);
			return -1;
		}
		r->refs[i].name = n;
	}
	return 0;
}

/* ---------------- ECDS: the config types a filter accepts ---------------- */

/*
 * The filters that may take their config by ECDS (HttpFilter, the
 * listener's Filter, ListenerFilter) number their fields alike: the
 * name 1 and the ExtensionConfigSource 5, whose type_urls are 4.
 * TypedExtensionConfig's typed_config is 2, an Any's type URL 1.
 */
enum {
	FILTER_NAME = 1,
	FILTER_CONFIG_DISCOVERY = 5,
	SOURCE_TYPE_URLS = 4,
	CONFIG_TYPED_CONFIG = 2,
	ANY_TYPE_URL = 1,
};

/* The first LEN field `number` of `data`, or false. */
static bool wire_find(const uint8_t *data, size_t len, uint32_t number,
		      struct xd_span *out)
{
	const uint8_t *p = data, *end = data + len;
	struct xd_wire_field f;

	while (xd_wire_next(&p, end, &f) == 1)
		if (f.number == number && f.wt == XD_WT_LEN) {
			out->data = f.data;
			out->len = f.len;
			return true;
		}
	return false;
}

static bool span_is(struct xd_span a, const char *s, size_t n)
{
	return a.len == n && memcmp(a.data, s, n) == 0;
}

/* The type a TypedExtensionConfig's config is of: its Any's type URL. */
static bool config_type(struct xd_span config, struct xd_span *url)
{
	struct xd_span any;

	return wire_find(config.data, config.len, CONFIG_TYPED_CONFIG, &any) &&
	       wire_find(any.data, any.len, ANY_TYPE_URL, url);
}

struct accepts_walk {
	const char *name;
	struct xd_span type;    /* the config's */
	struct xd_buf refused;  /* a refusing filter's type_urls */
	bool ok;
};

static void filter_accepts(const uint8_t *value, size_t len, void *arg)
{
	struct accepts_walk *w = arg;
	struct xd_span name = {0}, source, url;
	const uint8_t *p, *end;
	struct xd_wire_field f;
	bool found = false;

	if (!w->ok || !wire_find(value, len, FILTER_NAME, &name) ||
	    !span_is(name, w->name, strlen(w->name)) ||
	    !wire_find(value, len, FILTER_CONFIG_DISCOVERY, &source))
		return;
	for (p = source.data, end = p + source.len; xd_wire_next(&p, end, &f) == 1;)
		if (f.number == SOURCE_TYPE_URLS && f.wt == XD_WT_LEN) {
			url.data = f.data;
			url.len = f.len;
			found |= span_is(url, (const char *)w->type.data, w->type.len);
		}
	if (found)
		return;
	w->ok = false;
	for (p = source.data, end = p + source.len; xd_wire_next(&p, end, &f) == 1;)
		if (f.number == SOURCE_TYPE_URLS && f.wt == XD_WT_LEN) {
			if (w->refused.len > 0)
				xd_buf_append(&w->refused, ", ", 2);
			xd_buf_append(&w->refused, f.data, f.len);
		}
}

bool xd_resource_ecds_accepts(const struct xd_schema *s,
			      const struct xd_msgdesc *m, enum xd_rtype t,
			      const uint8_t *data, size_t len, const char *name,
			      struct xd_span config, char *got, size_t gotlen,
			      char *accepts, size_t acceptslen)
{
	const struct xd_rtype_info *info = xd_rtype_info(t);
	static const char suffix[] = ".name";
	struct accepts_walk w = {.name = name, .refused = XD_BUF_INIT, .ok = true};

	if (!config_type(config, &w.type))
		return true; /* no config type: the schema's checks say so */
	for (size_t i = 0; w.ok && i < info->nrefs; i++) {
		const char *path = info->refs[i].path;
		size_t n = strlen(path);
		char *filter;

		if (info->refs[i].to != XD_EXTENSION_CONFIG || n < sizeof(suffix) ||
		    strcmp(path + n - (sizeof(suffix) - 1), suffix) != 0)
			continue;
		/* the filter itself: the path without its ".name" */
		filter = xd_strndup(path, n - (sizeof(suffix) - 1));
		xd_schema_walk(s, m, data, len, filter, filter_accepts, &w);
		free(filter);
	}
	if (!w.ok) {
		snprintf(got, gotlen, "%.*s", (int)w.type.len, (const char *)w.type.data);
		snprintf(accepts, acceptslen, "%.*s", (int)w.refused.len,
			 (const char *)w.refused.data);
	}
	xd_buf_free(&w.refused);
	return w.ok;
}

int xd_resource_analyze(const struct xd_schema *s, const struct xd_msgdesc *m,
			enum xd_rtype t, const uint8_t *data, size_t len,
			const char *ann_name, struct xd_resinfo *out,
			char *why, size_t whylen)
{
	const struct xd_rtype_info *info = xd_rtype_info(t);
	struct walk w = {.s = s, .r = out};
	bool by_ann = xd_rtype_named_by_annotation(t);

	memset(out, 0, sizeof(*out));
	if (by_ann)
		w.first = ann_name != NULL ? xd_strdup(ann_name) : NULL;
	else
		xd_schema_walk(s, m, data, len, info->name_field, take_first, &w);
	if (w.first == NULL || w.first[0] == '\0') {
		snprintf(why, whylen, "%s without a%s %s%s", info->noun,
			 by_ann ? "n xdstp" : "",
			 w.nul ? "valid name (NUL byte)" : info->name_field,
			 by_ann ? " (the message has no name field)" : "");
		free(w.first);
		return -1;
	}
	out->name = w.first;
	if (info->aliased && xd_xdstp_is(out->name, strlen(out->name))) {
		snprintf(why, whylen, "virtual host '%s': virtual hosts are named '<route configuration>/<name>', not by xdstp:// names",
			 out->name);
		xd_resinfo_clear(out);
		return -1;
	}
	if (canon_name(&out->name, &out->renamed, t, true, why, whylen) != 0) {
		xd_resinfo_clear(out);
		return -1;
	}
	/* the name is not in the message: nothing to rewrite there */
	if (by_ann)
		out->renamed = false;
	/* the type's reference rules (xds/rtype.h), then those a field
	 * path cannot say */
	for (size_t i = 0; i < info->nrefs; i++) {
		w.to = info->refs[i].to;
		xd_schema_walk(s, m, data, len, info->refs[i].path, add_ref, &w);
	}
	if (t == XD_LISTENER || t == XD_CLUSTER)
		add_sds_refs(&w, m, t, data, len);
	if (t == XD_CLUSTER) {
		uint64_t type = 0; /* DiscoveryType; absent means STATIC */

		xd_schema_walk(s, m, data, len, "type", varint_visit, &type);
		if (type == 3) { /* EDS */
			w.first = NULL;
			w.nul = false;
			xd_schema_walk(s, m, data, len, "eds_cluster_config.service_name",
				   take_first, &w);
			w.to = XD_ENDPOINT;
			if (w.first != NULL && w.first[0] != '\0') {
				add_ref((const uint8_t *)w.first, strlen(w.first), &w);
			} else if (xd_xdstp_is(out->name, strlen(out->name))) {
				/* An xdstp name says its type (rule X1): the
				 * cluster's own cannot name its endpoints too. */
				snprintf(why, whylen, "EDS cluster '%s' has an xdstp:// name, which names a cluster, not its endpoints: set eds_cluster_config.service_name to the name of its %s",
					 out->name,
					 xd_rtype_info(XD_ENDPOINT)->message);
				free(w.first);
				xd_resinfo_clear(out);
				return -1;
			} else {
				add_ref((const uint8_t *)out->name, strlen(out->name), &w);
			}
			free(w.first);
		}
	}
	if (t == XD_VIRTUAL_HOST) {
		const char *slash = strchr(out->name, '/');

		if (slash == NULL || slash == out->name) {
			snprintf(why, whylen, "virtual host '%s' must be named '<route configuration>/<name>'",
				 out->name);
			xd_resinfo_clear(out);
			return -1;
		}
		w.prefix = out->name;
		w.prefix_len = (size_t)(slash - out->name);
		w.to = XD_ROUTE;
		add_ref((const uint8_t *)out->name, w.prefix_len, &w);
		xd_schema_walk(s, m, data, len, "domains", add_alias, &w);
	}
	if (canon_refs(out, why, whylen) != 0) {
		xd_resinfo_clear(out);
		return -1;
	}
	unique(out);
	return 0;
}

void xd_resinfo_clear(struct xd_resinfo *r)
{
	free(r->name);
	for (size_t i = 0; i < r->nrefs; i++)
		free((char *)r->refs[i].name);
	free(r->refs);
	for (size_t i = 0; i < r->naliases; i++)
		free(r->aliases[i]);
	free(r->aliases);
	memset(r, 0, sizeof(*r));
}

uint8_t *xd_resource_rename(const uint8_t *data, size_t len,
			    const char *name, size_t *out_len)
{
	struct xd_buf b = XD_BUF_INIT;
	const uint8_t *p = data, *end = data + len;
	struct xd_wire_field f;
	int rc;

	xd_wire_bytes(&b, 1, name, strlen(name));
	for (const uint8_t *start = p; (rc = xd_wire_next(&p, end, &f)) == 1;
	     start = p)
		if (f.number != 1)
			xd_buf_append(&b, start, (size_t)(p - start));
	if (rc < 0) {
		xd_buf_free(&b);
		return NULL;
	}
	return xd_buf_steal(&b, out_len);
}
