/* SPDX-License-Identifier: Apache-2.0 */
/* xDS clients: requests, responses, decoding. */
#include "proto_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/config/core/v3/base.pb-c.h"
#include "google/rpc/status.pb-c.h"
#include "util/buf.h"
#include "xdtest.h"

#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"

/* ---------------- clients ---------------- */

struct tstate {
	char *version; /* of the last response received */
	char *nonce;
	char *acked;   /* the last version ACKed (SotW NACKs repeat it) */
	struct pu_strs names; /* SotW: the last list sent */
};

struct pu_client {
	struct pu_env *env;
	struct xdc_conn *conn;
	struct xdc_stream *st;
	bool delta, ads;
	char *node_id, *node_cluster, *feature;
	bool node_sent;
	struct tstate ts[PU_NTYPES];
};

struct pu_client *pu_open_method(struct pu_env *e, const char *method,
				 bool delta)
{
	struct pu_client *c = calloc(1, sizeof(*c));

	ck_assert(c != NULL);
	c->env = e;
	c->delta = delta;
	c->ads = strcmp(method, XDC_ADS) == 0 || strcmp(method, XDC_DELTA_ADS) == 0;
	c->conn = xdc_connect(e->d->target);
	c->st = xdc_open(c->conn, method);
	pu_client_node(c, "node-1", "test", NULL);
	return c;
}

struct pu_client *pu_open(struct pu_env *e, bool delta, bool ads,
			  enum pu_type t)
{
	const char *m = pu_method(delta, ads, t);

	ck_assert_msg(m != NULL, "no method for %s", pu_type_label(t));
	return pu_open_method(e, m, delta);
}

struct pu_client *pu_connect(struct pu_env *e, const struct pu_combo *c)
{
	return pu_open(e, c->delta, c->ads, c->type);
}

void pu_client_free(struct pu_client *c)
{
	if (c == NULL)
		return;
	/* requests on their way count for pu_env_sync: let them land
	 * before the stream is cancelled */
	if (c->env->d->pid > 0 && !xdc_status(c->st, NULL, NULL, 0))
		pu_env_sync(c->env);
	xdc_stream_free(c->st);
	xdc_conn_free(c->conn);
	for (int t = 0; t < PU_NTYPES; t++) {
		free(c->ts[t].version);
		free(c->ts[t].nonce);
		free(c->ts[t].acked);
		pu_strs_clear(&c->ts[t].names);
	}
	free(c->node_id);
	free(c->node_cluster);
	free(c->feature);
	free(c);
}

void pu_client_node(struct pu_client *c, const char *id, const char *cluster,
		    const char *feature)
{
	free(c->node_id);
	free(c->node_cluster);
	free(c->feature);
	c->node_id = strdup(id);
	c->node_cluster = strdup(cluster);
	c->feature = feature != NULL ? strdup(feature) : NULL;
}

struct xdc_stream *pu_stream(struct pu_client *c)
{
	return c->st;
}

static void set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = v != NULL ? strdup(v) : NULL;
}

/* protobuf-c ResourceLocators of `n` pu_locators (rule P1); freed with
 * free_locators. */
static Envoy__Service__Discovery__V3__ResourceLocator **
make_locators(const struct pu_locator *v, size_t n)
{
	Envoy__Service__Discovery__V3__ResourceLocator **out =
		calloc(n + 1, sizeof(*out));

	ck_assert(out != NULL);
	for (size_t i = 0; i < n; i++) {
		Envoy__Service__Discovery__V3__ResourceLocator init =
			ENVOY__SERVICE__DISCOVERY__V3__RESOURCE_LOCATOR__INIT;
		Envoy__Service__Discovery__V3__ResourceLocator *l =
			malloc(sizeof(*l));

		ck_assert(l != NULL);
		*l = init;
		l->name = (char *)v[i].name;
		l->n_dynamic_parameters = v[i].nparams;
		l->dynamic_parameters =
			calloc(v[i].nparams + 1, sizeof(*l->dynamic_parameters));
		ck_assert(l->dynamic_parameters != NULL);
		for (size_t k = 0; k < v[i].nparams; k++) {
			Envoy__Service__Discovery__V3__ResourceLocator__DynamicParametersEntry
				e = ENVOY__SERVICE__DISCOVERY__V3__RESOURCE_LOCATOR__DYNAMIC_PARAMETERS_ENTRY__INIT,
				*p = malloc(sizeof(*p));

			ck_assert(p != NULL);
			*p = e;
			p->key = (char *)v[i].params[2 * k];
			p->value = (char *)v[i].params[2 * k + 1];
			l->dynamic_parameters[k] = p;
		}
		out[i] = l;
	}
	return out;
}

static void free_locators(Envoy__Service__Discovery__V3__ResourceLocator **v,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < v[i]->n_dynamic_parameters; k++)
			free(v[i]->dynamic_parameters[k]);
		free(v[i]->dynamic_parameters);
		free(v[i]);
	}
	free(v);
}

void pu_send(struct pu_client *c, const struct pu_req *r)
{
	Envoy__Service__Discovery__V3__ResourceLocator
		**locs = make_locators(r->locators, r->nlocators),
		**unlocs = make_locators(r->unsub_locators, r->nunsub_locators);
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;
	char *feature[4], *features = NULL;
	bool with_node = r->node == PU_NODE_ALWAYS ||
			 (r->node == PU_NODE_AUTO && !c->node_sent);
	const char *url = r->no_type_url ? "" :
			  r->type_url != NULL ? r->type_url : pu_type_url(r->type);

	node.id = (char *)(r->node_id != NULL ? r->node_id : c->node_id);
	node.cluster = c->node_cluster;
	if (c->feature != NULL) {
		/* "a,b": several features (pu_client_node) */
		char *save = NULL;

		features = strdup(c->feature);
		ck_assert(features != NULL);
		for (char *f = strtok_r(features, ",", &save);
		     f != NULL && node.n_client_features < 4;
		     f = strtok_r(NULL, ",", &save))
			feature[node.n_client_features++] = f;
		node.client_features = feature;
	}
	err.code = 3; /* INVALID_ARGUMENT, as Envoy sends */
	err.message = (char *)r->error;
	if (c->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
			*ents = NULL, **eptr = NULL;

		req.node = with_node ? &node : NULL;
		req.type_url = (char *)url;
		req.n_resource_names_subscribe = r->nnames;
		req.resource_names_subscribe = (char **)r->names;
		req.n_resource_names_unsubscribe = r->nunsub;
		req.resource_names_unsubscribe = (char **)r->unsub;
		req.n_resource_locators_subscribe = r->nlocators;
		req.resource_locators_subscribe = locs;
		req.n_resource_locators_unsubscribe = r->nunsub_locators;
		req.resource_locators_unsubscribe = unlocs;
		req.response_nonce = (char *)(r->nonce ? r->nonce : "");
		req.error_detail = r->error != NULL ? &err : NULL;
		if (r->ninit > 0) {
			ents = calloc(r->ninit, sizeof(*ents));
			eptr = calloc(r->ninit, sizeof(*eptr));
			ck_assert(ents != NULL && eptr != NULL);
			for (size_t i = 0; i < r->ninit; i++) {
				Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
					init = ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INITIAL_RESOURCE_VERSIONS_ENTRY__INIT;

				ents[i] = init;
				ents[i].key = (char *)r->init_names[i];
				ents[i].value = (char *)r->init_versions[i];
				eptr[i] = &ents[i];
			}
			req.n_initial_resource_versions = r->ninit;
			req.initial_resource_versions = eptr;
		}
		xdc_send_delta(c->st, &req, pu_wait_ms());
		free(ents);
		free(eptr);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		req.version_info = (char *)(r->version ? r->version : "");
		req.node = with_node ? &node : NULL;
		req.n_resource_names = r->nnames;
		req.resource_names = (char **)r->names;
		req.n_resource_locators = r->nlocators;
		req.resource_locators = locs;
		req.type_url = (char *)url;
		req.response_nonce = (char *)(r->nonce ? r->nonce : "");
		req.error_detail = r->error != NULL ? &err : NULL;
		xdc_send_sotw(c->st, &req, pu_wait_ms());
		if (r->type_url == NULL && !r->no_type_url) {
			struct tstate *ts = &c->ts[r->type];
			struct pu_strs names = {0};

			/* r->names may be ts->names itself (ACKs); kept as
			 * sent (a list of 100,000 names must stay cheap) */
			names.v = malloc((r->nnames + 1) * sizeof(*names.v));
			ck_assert(names.v != NULL);
			for (size_t i = 0; i < r->nnames; i++)
				names.v[names.n++] = strdup(r->names[i]);
			pu_strs_clear(&ts->names);
			ts->names = names;
			if (r->error == NULL && r->nonce != NULL && r->version != NULL)
				set_str(&ts->acked, r->version);
		}
	}
	free(features);
	free_locators(locs, r->nlocators);
	free_locators(unlocs, r->nunsub_locators);
	if (with_node)
		c->node_sent = true;
	/* xdsd logs a line for it unless it is of a type it does not serve
	 * on an aggregated stream (answered without a line per request);
	 * list collections it serves (rule X3) */
	if (!(c->ads && r->type_url != NULL && pu_type_of_url(r->type_url) < 0 &&
	      !pu_collection_url(r->type_url)))
		c->env->sent++;
}

static size_t collect(va_list ap, const char ***out)
{
	const char **v = NULL;
	size_t n = 0;

	for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
		v = realloc(v, (n + 1) * sizeof(*v));
		ck_assert(v != NULL);
		v[n++] = s;
	}
	*out = v;
	return n;
}

void pu_subv(struct pu_client *c, enum pu_type t, const char *const *names,
	     size_t n)
{
	struct pu_req r = {.type = t, .names = names, .nnames = n};

	if (!c->delta) {
		r.version = c->ts[t].version;
		r.nonce = c->ts[t].nonce;
	}
	pu_send(c, &r);
}

void pu_sub(struct pu_client *c, enum pu_type t, ...)
{
	const char **v;
	size_t n;
	va_list ap;

	va_start(ap, t);
	n = collect(ap, &v);
	va_end(ap);
	pu_subv(c, t, v, n);
	free(v);
}

void pu_unsub(struct pu_client *c, enum pu_type t, ...)
{
	struct pu_req r = {.type = t};
	const char **v;
	va_list ap;

	ck_assert(c->delta);
	va_start(ap, t);
	r.nunsub = collect(ap, &v);
	va_end(ap);
	r.unsub = v;
	pu_send(c, &r);
	free(v);
}

void pu_ack(struct pu_client *c, const struct pu_resp *r)
{
	struct pu_req q = {.nonce = r->nonce};

	if (r->type >= 0) {
		q.type = (enum pu_type)r->type;
	} else {
		q.type = PU_CDS;
		q.type_url = r->type_url;
	}
	if (!c->delta) {
		q.version = r->version;
		if (r->type >= 0) {
			q.names = (const char *const *)c->ts[r->type].names.v;
			q.nnames = c->ts[r->type].names.n;
		}
	}
	pu_send(c, &q);
}

void pu_nack(struct pu_client *c, const struct pu_resp *r, const char *msg)
{
	struct pu_req q = {.nonce = r->nonce, .error = msg};

	ck_assert(r->type >= 0);
	q.type = (enum pu_type)r->type;
	if (!c->delta) {
		q.version = c->ts[r->type].acked ? c->ts[r->type].acked : "";
		q.names = (const char *const *)c->ts[r->type].names.v;
		q.nnames = c->ts[r->type].names.n;
	}
	pu_send(c, &q);
}

/* ---------------- responses ---------------- */

static char *status_text(struct pu_client *c)
{
	grpc_status_code code;
	char *details = NULL, *out;

	if (!xdc_status(c->st, &code, &details, 1000))
		return strdup("no status");
	ck_assert(asprintf(&out, "status %d '%s'", (int)code,
			   details ? details : "") > 0);
	free(details);
	return out;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
	uint8_t *d = malloc(n + 1);

	ck_assert(d != NULL);
	if (n > 0)
		memcpy(d, p, n);
	d[n] = 0;
	return d;
}

/* Constraints in a short form (rule P1): "k=v", "k?", "!x", "(a&b)",
 * "(a|b)". */
static void show_dpc(struct xd_buf *b,
		     const Envoy__Service__Discovery__V3__DynamicParameterConstraints *d)
{
	const Envoy__Service__Discovery__V3__DynamicParameterConstraints__ConstraintList *l = NULL;
	const char *op = "";

	switch (d->type_case) {
	case ENVOY__SERVICE__DISCOVERY__V3__DYNAMIC_PARAMETER_CONSTRAINTS__TYPE_CONSTRAINT:
		if (d->constraint->constraint_type_case ==
		    ENVOY__SERVICE__DISCOVERY__V3__DYNAMIC_PARAMETER_CONSTRAINTS__SINGLE_CONSTRAINT__CONSTRAINT_TYPE_VALUE)
			xd_buf_printf(b, "%s=%s", d->constraint->key,
				      d->constraint->value);
		else
			xd_buf_printf(b, "%s?", d->constraint->key);
		return;
	case ENVOY__SERVICE__DISCOVERY__V3__DYNAMIC_PARAMETER_CONSTRAINTS__TYPE_NOT_CONSTRAINTS:
		xd_buf_printf(b, "!");
		show_dpc(b, d->not_constraints);
		return;
	case ENVOY__SERVICE__DISCOVERY__V3__DYNAMIC_PARAMETER_CONSTRAINTS__TYPE_OR_CONSTRAINTS:
		l = d->or_constraints;
		op = "|";
		break;
	case ENVOY__SERVICE__DISCOVERY__V3__DYNAMIC_PARAMETER_CONSTRAINTS__TYPE_AND_CONSTRAINTS:
		l = d->and_constraints;
		op = "&";
		break;
	default:
		xd_buf_printf(b, "<none>");
		return;
	}
	xd_buf_printf(b, "(");
	for (size_t i = 0; i < l->n_constraints; i++) {
		if (i > 0)
			xd_buf_printf(b, "%s", op);
		show_dpc(b, l->constraints[i]);
	}
	xd_buf_printf(b, ")");
}

static char *resource_name_text(
	const Envoy__Service__Discovery__V3__ResourceName *n, bool with_name)
{
	struct xd_buf b = XD_BUF_INIT;

	if (with_name)
		xd_buf_printf(&b, "%s", n->name);
	if (n->dynamic_parameter_constraints != NULL) {
		if (with_name)
			xd_buf_printf(&b, "[");
		show_dpc(&b, n->dynamic_parameter_constraints);
		if (with_name)
			xd_buf_printf(&b, "]");
	}
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
}

static void fill_from_resource(struct pu_res *x,
			       const Envoy__Service__Discovery__V3__Resource *r)
{
	if (r->resource_name != NULL) {
		x->name = strdup(r->resource_name->name);
		x->constraints = resource_name_text(r->resource_name, false);
	} else {
		x->name = strdup(r->name);
	}
	x->version = strdup(r->version);
	x->ttl_ms = r->ttl == NULL ? -1 :
		    (long)r->ttl->seconds * 1000 + r->ttl->nanos / 1000000;
	x->naliases = r->n_aliases;
	x->aliases = calloc(r->n_aliases + 1, sizeof(char *));
	ck_assert(x->aliases != NULL);
	for (size_t k = 0; k < r->n_aliases; k++)
		x->aliases[k] = strdup(r->aliases[k]);
	if (r->resource != NULL) {
		x->has_body = true;
		x->url = strdup(r->resource->type_url);
		x->body = dup_bytes(r->resource->value.data, r->resource->value.len);
		x->len = r->resource->value.len;
	}
}

/* resource_errors of either response (rules N1-N3). */
static void fill_errors(struct pu_resp *out,
			Envoy__Service__Discovery__V3__ResourceError **v,
			size_t n)
{
	out->nerrors = n;
	out->errors = calloc(n + 1, sizeof(char *));
	out->error_messages = calloc(n + 1, sizeof(char *));
	out->error_codes = calloc(n + 1, sizeof(int));
	ck_assert(out->errors != NULL && out->error_messages != NULL &&
		  out->error_codes != NULL);
	for (size_t i = 0; i < n; i++) {
		const Envoy__Service__Discovery__V3__ResourceError *e = v[i];

		out->errors[i] = strdup(e->resource_name != NULL ?
						e->resource_name->name : "");
		out->error_codes[i] = e->error_detail != NULL ?
					      e->error_detail->code : 0;
		out->error_messages[i] = strdup(
			e->error_detail != NULL ? e->error_detail->message : "");
	}
}

static struct pu_resp *decode(struct pu_client *c, const uint8_t *data,
			      size_t len)
{
	struct pu_resp *out = calloc(1, sizeof(*out));
	static const int name_path[] = {1};

	ck_assert(out != NULL);
	out->delta = c->delta;
	out->raw_len = len;
	if (c->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
			envoy__service__discovery__v3__delta_discovery_response__unpack(NULL, len, data);

		PU_ASSERT(r != NULL, "a DeltaDiscoveryResponse that does not decode");
		out->type_url = strdup(r->type_url);
		out->version = strdup(r->system_version_info);
		out->nonce = strdup(r->nonce);
		out->nres = r->n_resources;
		out->res = calloc(r->n_resources + 1, sizeof(*out->res));
		ck_assert(out->res != NULL);
		for (size_t i = 0; i < r->n_resources; i++)
			fill_from_resource(&out->res[i], r->resources[i]);
		out->nremoved = r->n_removed_resources;
		out->removed = calloc(r->n_removed_resources + 1, sizeof(char *));
		ck_assert(out->removed != NULL);
		for (size_t i = 0; i < r->n_removed_resources; i++)
			out->removed[i] = strdup(r->removed_resources[i]);
		out->nremoved_names = r->n_removed_resource_names;
		out->removed_names = calloc(r->n_removed_resource_names + 1,
					    sizeof(char *));
		ck_assert(out->removed_names != NULL);
		for (size_t i = 0; i < r->n_removed_resource_names; i++)
			out->removed_names[i] = resource_name_text(
				r->removed_resource_names[i], true);
		fill_errors(out, r->resource_errors, r->n_resource_errors);
		envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			envoy__service__discovery__v3__discovery_response__unpack(NULL, len, data);

		PU_ASSERT(r != NULL, "a DiscoveryResponse that does not decode");
		out->type_url = strdup(r->type_url);
		out->version = strdup(r->version_info);
		out->nonce = strdup(r->nonce);
		out->nres = r->n_resources;
		out->res = calloc(r->n_resources + 1, sizeof(*out->res));
		out->removed = calloc(1, sizeof(char *));
		ck_assert(out->res != NULL && out->removed != NULL);
		for (size_t i = 0; i < r->n_resources; i++) {
			Google__Protobuf__Any *a = r->resources[i];
			struct pu_res *x = &out->res[i];

			if (strcmp(a->type_url, RESOURCE_URL) == 0) {
				Envoy__Service__Discovery__V3__Resource *w =
					envoy__service__discovery__v3__resource__unpack(
						NULL, a->value.len, a->value.data);

				PU_ASSERT(w != NULL, "a wrapped Resource that does not decode");
				fill_from_resource(x, w);
				x->wrapped = true;
				envoy__service__discovery__v3__resource__free_unpacked(w, NULL);
			} else {
				x->has_body = true;
				x->ttl_ms = -1;
				x->url = strdup(a->type_url);
				x->body = dup_bytes(a->value.data, a->value.len);
				x->len = a->value.len;
				x->name = pu_pb_string(x->body, x->len, name_path, 1);
				if (x->name == NULL)
					x->name = strdup("");
				x->aliases = calloc(1, sizeof(char *));
			}
		}
		fill_errors(out, r->resource_errors, r->n_resource_errors);
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	}
	out->type = pu_type_of_url(out->type_url);
	if (out->type >= 0) {
		set_str(&c->ts[out->type].version, out->version);
		set_str(&c->ts[out->type].nonce, out->nonce);
	}
	return out;
}

struct pu_resp *pu_recv(struct pu_client *c, int timeout_ms)
{
	uint8_t *data;
	size_t len;
	int rc = xdc_recv(c->st, &data, &len, timeout_ms);
	struct pu_resp *r;

	if (rc < 0)
		return NULL;
	if (rc == 0)
		ck_abort_msg("[%s] the stream ended: %s", pu_label(), status_text(c));
	r = decode(c, data, len);
	free(data);
	return r;
}

static char *summary(const struct pu_resp *r)
{
	char *s;

	ck_assert(asprintf(&s, "%s version '%s' nonce '%s' resources [%s] missing [%s] removed [%s] errors [%s]",
			   r->type >= 0 ? pu_type_label((enum pu_type)r->type) : r->type_url,
			   r->version, r->nonce, pu_names(r), pu_missing(r),
			   pu_removed(r), pu_errors(r)) > 0);
	return s;
}

/* The end of the daemon's log, for failure messages. */
static const char *log_tail(struct pu_client *c)
{
	char *log = pu_env_log(c->env);
	size_t n = strlen(log);

	return n > 2000 ? log + n - 2000 : log;
}

struct pu_resp *pu_expect(struct pu_client *c, enum pu_type t)
{
	struct pu_resp *r = pu_recv(c, pu_wait_ms());

	PU_ASSERT(r != NULL, "no %s response within %d ms; xdsd's log ends:\n%s",
		  pu_type_label(t), pu_wait_ms(), log_tail(c));
	PU_ASSERT(r->type == (int)t, "expected a %s response, got %s",
		  pu_type_label(t), summary(r));
	return r;
}

void pu_expect_none(struct pu_client *c, int ms)
{
	struct pu_resp *r;

	pu_env_sync(c->env);
	r = pu_recv(c, ms > 0 ? ms : pu_quiet_ms());

	PU_ASSERT(r == NULL, "expected no response, got %s", summary(r));
}

void pu_expect_status(struct pu_client *c, int code, const char *needle)
{
	long long deadline = xdtest_now_ms() + pu_wait_ms();
	grpc_status_code got;
	char *details = NULL;

	for (;;) {
		uint8_t *data;
		size_t len;

		if (xdc_status(c->st, &got, &details, 50))
			break;
		PU_ASSERT(xdtest_now_ms() < deadline,
			  "the stream did not end within %d ms", pu_wait_ms());
		/* drain messages sent before the status */
		if (xdc_recv(c->st, &data, &len, 50) == 1)
			free(data);
	}
	PU_ASSERT((int)got == code, "status %d '%s', expected %d", (int)got,
		  details ? details : "", code);
	if (needle != NULL)
		PU_ASSERT(details != NULL && strstr(details, needle) != NULL,
			  "status message '%s' lacks '%s'", details ? details : "",
			  needle);
	free(details);
}

void pu_resp_free(struct pu_resp *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nres; i++) {
		struct pu_res *x = &r->res[i];

		free(x->name);
		free(x->version);
		free(x->body);
		free(x->url);
		for (size_t k = 0; k < x->naliases; k++)
			free(x->aliases[k]);
		free(x->aliases);
		free(x->constraints);
	}
	for (size_t i = 0; i < r->nremoved; i++)
		free(r->removed[i]);
	free(r->removed);
	for (size_t i = 0; i < r->nremoved_names; i++)
		free(r->removed_names[i]);
	free(r->removed_names);
	for (size_t i = 0; i < r->nerrors; i++) {
		free(r->errors[i]);
		free(r->error_messages[i]);
	}
	free(r->errors);
	free(r->error_messages);
	free(r->error_codes);
	free(r->res);
	free(r->type_url);
	free(r->version);
	free(r->nonce);
	free(r);
}

static char *names_where(const struct pu_resp *r, bool body)
{
	char **v = calloc(r->nres + 1, sizeof(*v));
	size_t n = 0;
	char *out;

	ck_assert(v != NULL);
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].has_body == body)
			v[n++] = r->res[i].name;
	out = pu_join(v, n);
	free(v);
	return out;
}

char *pu_names(const struct pu_resp *r)
{
	return names_where(r, true);
}

char *pu_missing(const struct pu_resp *r)
{
	return names_where(r, false);
}

char *pu_removed(const struct pu_resp *r)
{
	return pu_join(r->removed, r->nremoved);
}

char *pu_errors(const struct pu_resp *r)
{
	return pu_join(r->errors, r->nerrors);
}

int pu_error_of(const struct pu_resp *r, const char *name,
		const char **message)
{
	for (size_t i = 0; i < r->nerrors; i++)
		if (strcmp(r->errors[i], name) == 0) {
			if (message != NULL)
				*message = r->error_messages[i];
			return r->error_codes[i];
		}
	return -1;
}

char *pu_variants(const struct pu_resp *r)
{
	char **v = calloc(r->nres + 1, sizeof(*v));
	size_t n = 0;
	char *out;

	ck_assert(v != NULL);
	for (size_t i = 0; i < r->nres; i++) {
		if (!r->res[i].has_body)
			continue;
		if (r->res[i].constraints != NULL)
			ck_assert(asprintf(&v[n], "%s[%s]", r->res[i].name,
					   r->res[i].constraints) > 0);
		else
			v[n] = strdup(r->res[i].name);
		n++;
	}
	out = pu_join(v, n);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return out;
}

char *pu_removed_variants(const struct pu_resp *r)
{
	return pu_join(r->removed_names, r->nremoved_names);
}

const struct pu_res *pu_find(const struct pu_resp *r, const char *name)
{
	for (size_t i = 0; i < r->nres; i++)
		if (strcmp(r->res[i].name, name) == 0)
			return &r->res[i];
	return NULL;
}

