/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/loader.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "schema/transcode.h"
#include "snapshot/annotations.h"
#include "snapshot/collection.h"
#include "snapshot/files.h"
#include "snapshot/parsed.h"
#include "snapshot/resource.h"
#include "util/xalloc.h"
#include "xds/dynparam.h"
#include "xds/xdstp.h"

#define NSECTIONS XD_SNAP_SECTIONS

/* One file being parsed into `pf` (parsed.h). */
struct build {
	const struct xd_schema *schema;
	const struct xd_section *sections;
	struct xd_table_builder *b[XD_RTYPE_COUNT];
	struct xd_table_builder *cb[XD_CTYPE_COUNT];
	const struct xd_snapfile *file;
	struct xd_diag *diag; /* the file's own errors: pf->diag */
	const char *key;      /* the snapshot's */
	struct xd_parsed *pf;
	struct xd_annotations ann; /* the current item's */
};

/* What an item defined (or tried to: `kind`), for the merge of the
 * key's files to check across them (merge_key). */
static struct xd_parsed_op *record(struct build *bd, const struct xd_item *it,
				   enum xd_parsed_kind kind, unsigned section,
				   const char *name)
{
	struct xd_parsed_op *op = xd_parsed_push(
		bd->pf, kind, name,
		(struct xd_span){(const uint8_t *)bd->ann.dpc,
				 (uint32_t)bd->ann.dpc_len});

	XD_ASSERT_INFO(section < NSECTIONS && it->index < UINT32_MAX,
		       "%s: %s", bd->file->path, it->path);
	op->section = (uint8_t)section;
	op->line = it->line;
	op->column = it->column;
	op->index = (uint32_t)it->index;
	return op;
}

/*
 * Who may be served a resource (docs/engine.md, "Secrets only to their
 * owner"): with "@allow", the identities its globs match, or everyone
 * with "@anyone"; without it, every client for most types, but a secret
 * (private keys, often) only to clients with a verified certificate, as
 * "@allow": ["*"] says: "*" matches every identity, the empty one of a
 * certificate that names none included. `xdsd --check` warns of each
 * such secret (note_open_secret).
 */
static void restrict_access(struct xd_table_builder *b, enum xd_rtype t,
			    const struct xd_annotations *ann)
{
	static const char *const verified[] = {"*"};

	if (ann->allow_set && !ann->allow_anyone)
		xd_table_builder_restrict(b, ann->allow, ann->nallow);
	else if (!ann->allow_set && xd_rtype_info(t)->secret)
		xd_table_builder_restrict(b, verified, 1);
}

/* A secret added without "@allow": recorded for --check's warning. */
static void note_open_secret(struct xd_load *out, const char *file,
			     const struct xd_parsed_op *op, const char *key)
{
	struct xd_open_secret *o;
	char *where, path[64];

	if (out->nopen == XD_DIAG_MAX) {
		out->open_dropped++;
		return;
	}
	xd_parsed_op_path(op, path, sizeof(path));
	if (op->line > 0)
		where = xd_asprintf("%s:%u:%u: %s", file, op->line, op->column,
				    path);
	else
		where = xd_asprintf("%s: %s", file, path);
	if (out->open == NULL)
		out->open = xd_calloc(XD_DIAG_MAX, sizeof(*out->open));
	o = &out->open[out->nopen++];
	o->where = where;
	o->name = xd_strdup(xd_parsed_op_name(op));
	o->key = xd_strdup(key);
}

/* A resource refused for `nerrors` errors of the file's own (reported):
 * recorded by the name it was given (NULL: none could be read), so that
 * references to it are not said missing as well (check_refs). */
static void broken(struct build *bd, const struct xd_item *it, size_t section,
		   const char *name, size_t nerrors)
{
	struct xd_parsed_op *op = xd_parsed_push(bd->pf, XD_PARSED_BROKEN,
						 name != NULL ? name : "",
						 (struct xd_span){NULL, 0});

	op->section = (uint8_t)section;
	op->line = it->line;
	op->column = it->column;
	op->index = (uint32_t)it->index;
	bd->pf->item_errors += nerrors;
}

/* Refuses the resource `it` for what `fmt` says, after its place. */
static void refuse(struct build *bd, const struct xd_item *it, size_t section,
		   const char *name, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void refuse(struct build *bd, const struct xd_item *it, size_t section,
		   const char *name, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	xd_diag_add(bd->diag, "%s:%u:%u: %s: %s", bd->file->path, it->line,
		    it->column, it->path, why);
	broken(bd, it, section, name, 1);
}

/*
 * A variant of a name (rule P1, "@dynamic_parameter_constraints"). Two
 * variants of a name whose constraints are equal would both match the
 * same parameters, and which one a client gets would be an accident: the
 * load is refused. (Constraints that differ may still overlap, say
 * {key: a} and {exists: a}; lookups then take the first by their
 * encoded bytes, the same on every xdsd.) Virtual hosts are looked up
 * by alias (rule D10), which has no parameters: they take no variants.
 */
static int add_variant(struct build *bd, enum xd_rtype t,
		       const struct xd_item *it, const struct xd_resinfo *info,
		       const uint8_t *data, size_t len)
{
	const struct xd_entry *first;

	if (xd_rtype_info(t)->aliased) {
		refuse(bd, it, t, info->name,
		       "a %s takes no '@dynamic_parameter_constraints' (they are asked for by alias)",
		       xd_rtype_info(t)->noun);
		return -1;
	}
	if (xd_table_builder_add_variant(
		    bd->b[t], info->name, data, len, info->refs, info->nrefs,
		    (struct xd_span){bd->ann.dpc, (uint32_t)bd->ann.dpc_len},
		    bd->file->path, it->line, &first) != 0) {
		/* reported by the merge, which knows the first */
		record(bd, it, XD_PARSED_DUP, t, info->name);
		return -1;
	}
	return 0;
}

/* A list collection (rule X3): named by "@name", its entries checked,
 * its members and their references to be resolved with the others. */
static void on_collection(struct build *bd, const struct xd_item *it,
			  enum xd_ctype c)
{
	const struct xd_ctype_info *ci = xd_ctype_info(c);
	const struct xd_entry *first;
	struct xd_collinfo info;
	char why[1024];

	if (bd->ann.on_demand) {
		refuse(bd, it, XD_RTYPE_COUNT + c, NULL,
		       "\"@on_demand\" is for virtual hosts (VHDS), not for a %s", ci->noun);
		return;
	}
	if (bd->ann.dpc != NULL) {
		/* a collection's variants are in its name (rule X3) */
		refuse(bd, it, XD_RTYPE_COUNT + c, NULL,
		       "a %s takes no '@dynamic_parameter_constraints': its context parameters are part of its \"@name\"",
		       ci->noun);
		return;
	}
	if (xd_collection_analyze(bd->schema, c, bd->sections[ci->member].type,
				  bd->ann.name, it->data, it->len, &info, why,
				  sizeof(why)) != 0) {
		refuse(bd, it, XD_RTYPE_COUNT + c, NULL, "%s", why);
		return;
	}
	if (xd_table_builder_add(bd->cb[c], info.name,
				 info.data != NULL ? info.data : it->data,
				 info.data != NULL ? info.len : it->len,
				 info.refs, info.nrefs, NULL, 0, bd->file->path,
				 it->line, &first) != 0)
		record(bd, it, XD_PARSED_DUP, XD_RTYPE_COUNT + c, info.name);
	else {
		record(bd, it, XD_PARSED_ENTRY, XD_RTYPE_COUNT + c, info.name);
		restrict_access(bd->cb[c], ci->member, &bd->ann);
		if (bd->ann.ttl_ms > 0)
			xd_table_builder_ttl(bd->cb[c], bd->ann.ttl_ms);
	}
	xd_collinfo_clear(&info);
}

/* Every resource, in file order: name it, find its references, add it. */
/* A resource of type `t` (or a variant of one) went into its table:
 * recorded in file order, and the annotations on it applied. */
static void accepted(struct build *bd, const struct xd_item *it,
		     enum xd_rtype t, const char *name)
{
	struct xd_parsed_op *op = record(bd, it, XD_PARSED_ENTRY, t, name);

	restrict_access(bd->b[t], t, &bd->ann);
	op->open_secret = xd_rtype_info(t)->secret && !bd->ann.allow_set;
	bd->pf->nopen += op->open_secret;
	if (bd->ann.ttl_ms > 0)
		xd_table_builder_ttl(bd->b[t], bd->ann.ttl_ms);
	if (bd->ann.on_demand)
		xd_table_builder_on_demand(bd->b[t]);
}

static int on_item(const struct xd_item *it, void *arg)
{
	struct build *bd = arg;
	size_t section = (size_t)(it->section - bd->sections);
	enum xd_rtype t = (enum xd_rtype)section;
	const struct xd_entry *first;
	struct xd_resinfo info;
	char why[512];
	const uint8_t *data = it->data;
	uint8_t *renamed = NULL;
	size_t len = it->len;

	/* the transcoder hands back one of the sections it was given */
	XD_ASSERT_INFO(section < NSECTIONS, "snapshot '%s'", bd->key);
	if (it->broken) {
		broken(bd, it, section, it->name, it->nerrors);
		return 0;
	}
	xd_annotations_read(it->ann, it->ann_len, &bd->ann);
	if (section >= XD_RTYPE_COUNT) {
		on_collection(bd, it, (enum xd_ctype)(section - XD_RTYPE_COUNT));
		return 0;
	}
	if (bd->ann.name != NULL && !xd_rtype_named_by_annotation(t)) {
		refuse(bd, it, section, NULL,
		       "\"@name\" names list collections and locality endpoints; a %s is named by its %s field",
		       xd_rtype_info(t)->noun, xd_rtype_info(t)->name_field);
		return 0;
	}
	if (bd->ann.on_demand && t != XD_VIRTUAL_HOST) {
		/* only VHDS clients ask for what they lack as they go */
		refuse(bd, it, section, NULL,
		       "\"@on_demand\" is for virtual hosts (VHDS), not for a %s",
		       xd_rtype_info(t)->noun);
		return 0;
	}
	if (xd_resource_analyze(bd->schema, it->section->type, t, it->data,
				it->len, bd->ann.name, &info, why,
				sizeof(why)) != 0) {
		refuse(bd, it, section, NULL, "%s", why);
		return 0;
	}
	if (info.renamed) {
		/* rule X1: the canonical name in the resource's own name too */
		renamed = xd_resource_rename(it->data, it->len, info.name,
					     &len);
		if (renamed == NULL) {
			refuse(bd, it, section, info.name, "malformed resource");
			xd_resinfo_clear(&info);
			return 0;
		}
		data = renamed;
	}
	if (strchr(info.name, XD_LOCATOR_SEP) != NULL) {
		/* the byte that makes a locator key (xds/dynparam.h) */
		refuse(bd, it, section, NULL,
		       "a name must not hold the control character 0x1f");
	} else if (bd->ann.dpc != NULL) {
		if (add_variant(bd, t, it, &info, data, len) == 0)
			accepted(bd, it, t, info.name);
	} else if (xd_table_builder_add(bd->b[t], info.name, data, len,
				 info.refs, info.nrefs,
				 (const char *const *)info.aliases, info.naliases,
				 bd->file->path, it->line, &first) != 0) {
		record(bd, it, XD_PARSED_DUP, t, info.name);
	} else {
		accepted(bd, it, t, info.name);
	}
	xd_resinfo_clear(&info);
	free(renamed);
	return 0;
}

static bool stop_at_first(const struct xd_entry *e, void *arg)
{
	(void)e;
	(void)arg;
	return false;
}

/* A reference resolves to a plain resource or to variants of the name
 * (rule P1: the client asks for it with its own parameters). One to a
 * glob collection (a locality's LEDS collection, rule G1) resolves when
 * the collection has a member: one with none would be a locality
 * without endpoints, more likely a misspelt name than meant (a locality
 * meant to have none can leave the load assignment). */
static bool resolves(const struct xd_table *t, const char *name)
{
	size_t n, len = strlen(name);

	if (xd_xdstp_is_glob(name, len))
		return xd_table_glob_members(t, name, len, stop_at_first, NULL) > 0;
	return xd_table_find(t, name, len) != NULL ||
	       xd_table_variants_of(t, name, len, &n) != NULL;
}

/*
 * What a key's files tried to define and could not (their BROKEN ops):
 * a reference to one of those names, or to any name of a section where
 * one failed without a name, is not reported missing, since its own
 * errors say why it is not there. NULL in check_refs: nothing failed.
 */
struct failed {
	const struct xd_parsed_op **ops; /* named ones, by section and name */
	size_t n;
	bool unnamed[XD_RTYPE_COUNT];
};

static int by_section_name(const void *pa, const void *pb)
{
	const struct xd_parsed_op *a = *(const struct xd_parsed_op *const *)pa;
	const struct xd_parsed_op *b = *(const struct xd_parsed_op *const *)pb;

	if (a->section != b->section)
		return a->section < b->section ? -1 : 1;
	return strcmp(xd_parsed_op_name(a), xd_parsed_op_name(b));
}

static void failed_init(struct failed *f, struct xd_parsed *const *pfs,
			size_t n)
{
	size_t count = 0;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < pfs[i]->nops; k++)
			count += pfs[i]->ops[k].kind == XD_PARSED_BROKEN;
	f->ops = xd_calloc(count + 1, sizeof(*f->ops));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < pfs[i]->nops; k++) {
			const struct xd_parsed_op *op = &pfs[i]->ops[k];

			if (op->kind != XD_PARSED_BROKEN || op->section >= XD_RTYPE_COUNT)
				continue;
			if (xd_parsed_op_name(op)[0] == '\0')
				f->unnamed[op->section] = true;
			else
				f->ops[f->n++] = op;
		}
	if (f->n > 1)
		qsort(f->ops, f->n, sizeof(*f->ops), by_section_name);
}

static bool failed_has(const struct failed *f, enum xd_rtype t, const char *name)
{
	struct xd_parsed_op key = {.section = (uint8_t)t, .name = name};
	const struct xd_parsed_op *kp = &key;

	if (f == NULL)
		return false;
	if (!f->unnamed[t] && xd_xdstp_is_glob(name, strlen(name))) {
		/* a glob collection (rule G1): one of its members failed */
		size_t len = strlen(name);
		bool in = false;

		for (size_t i = 0; i < f->n && !in; i++) {
			const char *m = xd_parsed_op_name(f->ops[i]);
			size_t ml = strlen(m);
			char *buf;

			if (f->ops[i]->section != t)
				continue;
			buf = xd_malloc(ml + 2);
			in = xd_xdstp_collection(m, ml, buf) == len &&
			     memcmp(buf, name, len) == 0;
			free(buf);
		}
		return in;
	}
	return f->unnamed[t] ||
	       (f->n > 0 && bsearch(&kp, f->ops, f->n, sizeof(*f->ops),
				    by_section_name) != NULL);
}

/* What checking a key's references needs. */
struct refcheck {
	const struct xd_schema *schema;
	const struct xd_section *sections;
	struct xd_table **tables;     /* [XD_RTYPE_COUNT] */
	const struct failed *failed;  /* NULL: nothing failed */
	struct xd_diag *diag;
};

/* "file:line: " of `e`; JSON files have no lines, so "file: " as their
 * other errors. */
static void where(const struct xd_entry *e, char *out, size_t len)
{
	if (e->line > 0)
		snprintf(out, len, "%s:%u", e->file, e->line);
	else
		snprintf(out, len, "%s", e->file);
}

/*
 * A filter of `e` (a resource of type `t`) that takes its config by
 * ECDS accepts the type of the config `name` resolves to (rule E1): a
 * config of a type not among its config_discovery's type_urls is one
 * Envoy refuses.
 */
static void check_ecds_type(const struct refcheck *rc, enum xd_rtype t,
			    const struct xd_entry *e, const char *name)
{
	const struct xd_entry *c = xd_table_find(rc->tables[XD_EXTENSION_CONFIG],
						 name, strlen(name));
	char at[512], got[256], accepts[512];

	if (c == NULL || rc->sections[t].type == NULL ||
	    xd_resource_ecds_accepts(rc->schema, rc->sections[t].type, t,
				     e->msg.data, e->msg.len, name, c->msg,
				     got, sizeof(got), accepts, sizeof(accepts)))
		return;
	where(e, at, sizeof(at));
	xd_diag_add(rc->diag, "%s: %s '%s': its filter '%s' accepts configs of type %s, but extension config '%s' is a %s",
		    at, xd_rtype_info(t)->noun, e->name, name, accepts, name, got);
}

/* Every reference of `e` (a `noun`; of type `t`, or -1 for a list
 * collection) resolves, or names what failed. */
static void check_entry_refs(const struct refcheck *rc, int t, const char *noun,
			     const struct xd_entry *e)
{
	for (uint32_t k = 0; k < e->nrefs; k++) {
		const struct xd_ref *r = &e->refs[k];
		char at[512];

		if (resolves(rc->tables[r->type], r->name)) {
			if (r->type == XD_EXTENSION_CONFIG && t >= 0)
				check_ecds_type(rc, (enum xd_rtype)t, e, r->name);
			continue;
		}
		if (failed_has(rc->failed, r->type, r->name))
			continue;
		where(e, at, sizeof(at));
		if (xd_xdstp_is_glob(r->name, strlen(r->name)))
			xd_diag_add(rc->diag, "%s: %s '%s' refers to the %s collection '%s', which has no member in the snapshot",
				    at, noun, e->name, xd_rtype_info(r->type)->noun, r->name);
		else
			xd_diag_add(rc->diag, "%s: %s '%s' refers to %s '%s', which is not in the snapshot",
				    at, noun, e->name, xd_rtype_info(r->type)->noun, r->name);
	}
}

/* Every reference of the resources of `from`, variants included. */
static void check_table_refs(const struct refcheck *rc, int t,
			     const struct xd_table *from, const char *noun)
{
	for (size_t i = 0; i < xd_table_count(from); i++)
		check_entry_refs(rc, t, noun, xd_table_at(from, i));
	for (size_t i = 0; i < xd_table_variant_count(from); i++)
		check_entry_refs(rc, t, noun, xd_table_variant_at(from, i));
}

/* Every reference of every resource resolves (both ends named), and
 * every member of a list collection is there, but for what `failed`
 * (may be NULL) names. */
static void check_refs(const struct xd_schema *schema,
		       const struct xd_section *sections,
		       struct xd_table *tables[XD_RTYPE_COUNT],
		       struct xd_table *colls[XD_CTYPE_COUNT],
		       const struct failed *failed, struct xd_diag *diag)
{
	const struct refcheck rc = {.schema = schema, .sections = sections,
				    .tables = tables, .failed = failed,
				    .diag = diag};

	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		check_table_refs(&rc, t, tables[t],
				 xd_rtype_info((enum xd_rtype)t)->noun);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		check_table_refs(&rc, -1, colls[c],
				 xd_ctype_info((enum xd_ctype)c)->noun);
}

/* One file parsed on its own into `pf`, its empty record (parsed.h):
 * its tables, its own errors, and what it defined in file order. */
static void parse_file(const struct xd_schema *schema,
		       const struct xd_section *sections,
		       const struct xd_snapfile *f, const char *key,
		       unsigned threads, struct xd_parsed *pf)
{
	struct build bd = {.schema = schema, .sections = sections, .file = f,
			   .diag = &pf->diag, .key = key, .pf = pf};

	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		bd.b[t] = xd_table_builder_new((enum xd_rtype)t);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		bd.cb[c] = xd_table_builder_new_url(
			xd_ctype_info((enum xd_ctype)c)->type_url);
	if (f->json)
		xd_transcode_json_file(schema, f->path, f->text, f->len,
				       sections, NSECTIONS,
				       xd_annotations_hooks(), on_item, &bd,
				       &pf->diag);
	else
		xd_transcode_yaml_file(schema, f->path, f->text, f->len,
				       threads, sections, NSECTIONS,
				       xd_annotations_hooks(), on_item, &bd,
				       &pf->diag);
	for (int s = 0; s < NSECTIONS; s++) {
		struct xd_table *t = xd_table_builder_finish(
			s < XD_RTYPE_COUNT ? bd.b[s] : bd.cb[s - XD_RTYPE_COUNT]);

		if (xd_table_count(t) + xd_table_variant_count(t) == 0) {
			xd_table_unref(t);
			t = NULL;
		}
		pf->tables[s] = t;
	}
	xd_parsed_resolve(pf);
}

/* The set of names defined so far in a key's files, by section (and, a
 * variant, constraints): what tells duplicates across files. */
struct seen {
	const struct xd_entry **slots;
	unsigned *sections;
	size_t mask;
};

static size_t seen_slot(const struct seen *sn, unsigned section,
			const char *name, struct xd_span constraints)
{
	size_t len = strlen(name);
	uint64_t h = XXH3_64bits_withSeed(name, len, section);
	size_t i;

	if (constraints.data != NULL)
		h ^= XXH3_64bits_withSeed(constraints.data, constraints.len, 1);
	for (i = h & sn->mask; sn->slots[i] != NULL; i = (i + 1) & sn->mask) {
		const struct xd_entry *e = sn->slots[i];

		if (sn->sections[i] == section && e->name_len == len &&
		    memcmp(e->name, name, len) == 0 &&
		    (e->constraints.data == NULL) == (constraints.data == NULL) &&
		    e->constraints.len == constraints.len &&
		    (constraints.len == 0 ||
		     memcmp(e->constraints.data, constraints.data,
			    constraints.len) == 0))
			break;
	}
	return i;
}

/* Moves the file's own errors [*from, to) into `diag`, where they came
 * in a load of every file at once. */
static void flush_errors(const struct xd_parsed *pf, size_t *from, size_t to,
			 struct xd_diag *diag)
{
	for (; *from < to; (*from)++) {
		if (*from < pf->diag.count)
			xd_diag_add(diag, "%s", pf->diag.msgs[*from]);
		else
			diag->dropped++; /* diag is full already */
	}
}

static void report_dup(struct xd_diag *diag, const struct xd_parsed *pf,
		       const struct xd_parsed_op *op,
		       const struct xd_entry *first)
{
	char path[64];
	const char *noun = xd_section(op->section).noun;

	xd_parsed_op_path(op, path, sizeof(path));
	if (op->variant)
		xd_diag_add(diag, "%s:%u:%u: %s: %s '%s' has a variant with the same dynamic parameter constraints (first at %s:%u)",
			    pf->path, op->line, op->column, path, noun,
			    xd_parsed_op_name(op), first->file, first->line);
	else
		xd_diag_add(diag, "%s:%u:%u: %s: duplicate %s '%s' (first at %s:%u)",
			    pf->path, op->line, op->column, path, noun,
			    xd_parsed_op_name(op), first->file, first->line);
}

/*
 * The files of a key as one: their own errors and every duplicate, in
 * the order a pass over every file would report them, and the open
 * secrets of the resources kept.
 */
static void merge_key(struct xd_parsed *const *pfs, size_t n,
		      const char *key, struct xd_load *out)
{
	struct seen sn;
	size_t total = 0, size = 16;

	for (size_t f = 0; f < n; f++)
		total += pfs[f]->nops;
	while (size < total * 2)
		size *= 2;
	sn.slots = xd_calloc(size, sizeof(*sn.slots));
	sn.sections = xd_calloc(size, sizeof(*sn.sections));
	sn.mask = size - 1;
	for (size_t f = 0; f < n; f++) {
		const struct xd_parsed *pf = pfs[f];
		size_t flushed = 0;

		for (size_t k = 0; k < pf->nops; k++) {
			const struct xd_parsed_op *op = &pf->ops[k];
			size_t i;

			flush_errors(pf, &flushed, op->diag_at, &out->diag);
			if (op->kind == XD_PARSED_BROKEN)
				continue; /* its errors were the file's */
			i = seen_slot(&sn, op->section, xd_parsed_op_name(op),
				      xd_parsed_op_constraints(op));
			if (sn.slots[i] != NULL) {
				report_dup(&out->diag, pf, op, sn.slots[i]);
				continue;
			}
			/* a name taken earlier in its file is in the set */
			XD_ASSERT_INFO(op->kind == XD_PARSED_ENTRY,
				       "%s:%u: '%s' refused, its first unknown",
				       pf->path, op->line, xd_parsed_op_name(op));
			sn.slots[i] = op->e;
			sn.sections[i] = op->section;
			if (op->open_secret)
				note_open_secret(out, pf->path, op, key);
		}
		flush_errors(pf, &flushed, xd_diag_total(&pf->diag),
			     &out->diag);
	}
	free(sn.slots);
	free(sn.sections);
}

/* Section `s` of a key: the merge of its files' tables, or the previous
 * snapshot's (`old`, may be NULL) when made of the very same ones. */
static struct xd_table *key_table(struct xd_parsed *const *pfs, size_t n,
				  int s, struct xd_table *old, bool *clash)
{
	struct xd_table **parts = xd_calloc(n + 1, sizeof(*parts));
	struct xd_table *t;
	size_t np = 0;

	for (size_t f = 0; f < n; f++)
		if (pfs[f]->tables[s] != NULL)
			parts[np++] = pfs[f]->tables[s];
	if (np == 0)
		t = s < XD_RTYPE_COUNT ?
			xd_table_empty((enum xd_rtype)s) :
			xd_table_builder_finish(xd_table_builder_new_url(
				xd_ctype_info((enum xd_ctype)(s - XD_RTYPE_COUNT))
					->type_url));
	else if (old != NULL && xd_table_merged_from(old, parts, np))
		t = xd_table_ref(old);
	else if (np == 1)
		t = xd_table_ref(parts[0]);
	else {
		bool c;

		t = xd_table_merge(parts, np, &c);
		*clash = *clash || c;
	}
	free(parts);
	return t;
}

static void unref_tables(struct xd_table *tables[XD_RTYPE_COUNT],
			 struct xd_table *colls[XD_CTYPE_COUNT])
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_table_unref(tables[t]);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_table_unref(colls[c]);
}

/* The open secrets of a key whose files define every name once: in
 * file order, as merge_key would note them. */
static void note_open_secrets(struct xd_parsed *const *pfs, size_t n,
			      const char *key, struct xd_load *out)
{
	for (size_t f = 0; f < n; f++)
		for (size_t k = 0; pfs[f]->nopen > 0 && k < pfs[f]->nops; k++)
			if (pfs[f]->ops[k].open_secret)
				note_open_secret(out, pfs[f]->path,
						 &pfs[f]->ops[k], key);
}

/* Where a file's own table `t` of section `s` can be `o` in every
 * message too, the file holds `o` instead (parsed.h). */
static void share(struct xd_parsed *const *pfs, size_t n, int s,
		  struct xd_table *t, struct xd_table *o)
{
	for (size_t f = 0; f < n; f++)
		if (pfs[f]->tables[s] == t && t != o &&
		    xd_table_interchangeable(o, t))
			xd_parsed_swap_table(pfs[f], (unsigned)s, o);
}

/*
 * Section `s` of a key: `o`, the one served, instead of `t` (consumed)
 * when equal in content, so clients see no change there. The files'
 * tables it was made of that `o` (or its parts, for a merge) can stand
 * for are traded for those, so the cache holds no second copy of what
 * is served (a one-endpoint change in a file would keep its unchanged
 * clusters twice), and the next reload finds `o` made of its files'
 * tables.
 */
static struct xd_table *keep_old(struct xd_table *t, struct xd_table *o,
				 struct xd_parsed *const *pfs, size_t n, int s)
{
	size_t parts = xd_table_merged_count(t);

	if (o == t || !xd_table_same(o, t))
		return t;
	share(pfs, n, s, t, o);
	if (parts > 0 && parts == xd_table_merged_count(o))
		for (size_t i = 0; i < parts; i++)
			share(pfs, n, s, xd_table_merged_part(t, i),
			      xd_table_merged_part(o, i));
	xd_table_unref(t);
	return xd_table_ref(o);
}

/*
 * The references of a key refused for its files' errors: those of the
 * resources that did parse, checked in the same load, so that fixing
 * the errors does not reveal more; but none to what failed (a cascade
 * of its errors). When a file failed other than resource by resource
 * (its YAML, a section that is not a list), what it would have
 * defined is unknown: then none is checked.
 */
static void check_refs_of_refused(const struct xd_schema *schema,
				  const struct xd_section *sections,
				  struct xd_parsed *const *pfs, size_t n,
				  struct xd_diag *diag)
{
	struct xd_table *tables[XD_RTYPE_COUNT] = {0};
	struct xd_table *colls[XD_CTYPE_COUNT] = {0};
	struct failed failed;
	bool clash = false;

	for (size_t f = 0; f < n; f++)
		if (xd_diag_total(&pfs[f]->diag) != pfs[f]->item_errors)
			return;
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		tables[t] = key_table(pfs, n, t, NULL, &clash);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		colls[c] = key_table(pfs, n, XD_RTYPE_COUNT + c, NULL, &clash);
	failed_init(&failed, pfs, n);
	check_refs(schema, sections, tables, colls, &failed, diag);
	free(failed.ops);
	unref_tables(tables, colls);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(xd_snapshot_key(*(struct xd_snapshot *const *)a),
		      xd_snapshot_key(*(struct xd_snapshot *const *)b));
}

struct xd_snapshot *xd_load_find(struct xd_snapshot *const *prev,
				  size_t nprev, const char *key)
{
	size_t lo = 0, hi = nprev;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(xd_snapshot_key(prev[mid]), key);

		if (c == 0)
			return prev[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct xd_snapshot *load_key(const struct xd_schema *schema,
				    const struct xd_section *sections,
				    const struct xd_snapkey *k, unsigned threads,
				    struct xd_snapshot *const *prev,
				    size_t nprev, struct xd_parsed_cache *cache,
				    struct xd_parsed **pfs, struct xd_load *out)
{
	struct xd_diag *diag = &out->diag;
	struct xd_table *tables[XD_RTYPE_COUNT] = {0};
	struct xd_table *colls[XD_CTYPE_COUNT] = {0};
	struct xd_snapshot *old = NULL, *snap;
	size_t errors = xd_diag_total(diag);
	bool wrong = false;

	for (size_t f = 0; f < k->nfiles; f++) {
		bool found;

		pfs[f] = xd_parsed_cache_get(cache, &k->files[f], &found);
		if (!found) {
			parse_file(schema, sections, &k->files[f], k->key,
				   threads, pfs[f]);
			out->parsed++;
		}
	}
	for (size_t f = 0; f < k->nfiles; f++)
		wrong = wrong || xd_diag_total(&pfs[f]->diag) > 0 ||
			pfs[f]->ndup > 0;
	old = xd_load_find(prev, nprev, k->key);
	for (int t = 0; !wrong && t < XD_RTYPE_COUNT; t++)
		tables[t] = key_table(pfs, k->nfiles, t,
				      old != NULL ? xd_snapshot_table(old, (enum xd_rtype)t) : NULL,
				      &wrong);
	for (int c = 0; !wrong && c < XD_CTYPE_COUNT; c++)
		colls[c] = key_table(pfs, k->nfiles, XD_RTYPE_COUNT + c,
				     old != NULL ? xd_snapshot_collection(old, (enum xd_ctype)c) : NULL,
				     &wrong);
	if (wrong) {
		/* every error in the order one pass over the files meets
		 * them: the slow way, for a load refused anyway */
		unref_tables(tables, colls);
		merge_key(pfs, k->nfiles, k->key, out);
		XD_ASSERT_INFO(xd_diag_total(diag) != errors,
			       "snapshot '%s': files that clash, and no error",
			       k->key);
		check_refs_of_refused(schema, sections, pfs, k->nfiles, diag);
		return NULL;
	}
	note_open_secrets(pfs, k->nfiles, k->key, out);
	check_refs(schema, sections, tables, colls, NULL, diag);
	if (xd_diag_total(diag) != errors) {
		unref_tables(tables, colls);
		return NULL;
	}
	/* Reuse what did not change, so clients see no change there. */
	for (int t = 0; old != NULL && t < XD_RTYPE_COUNT; t++)
		tables[t] = keep_old(tables[t],
				     xd_snapshot_table(old, (enum xd_rtype)t),
				     pfs, k->nfiles, t);
	for (int c = 0; old != NULL && c < XD_CTYPE_COUNT; c++)
		colls[c] = keep_old(colls[c],
				    xd_snapshot_collection(old, (enum xd_ctype)c),
				    pfs, k->nfiles, XD_RTYPE_COUNT + c);
	snap = xd_snapshot_with_collections(k->key, tables, colls);
	return snap;
}

/* Everything after the read: `keys` (consumed) are loaded into `out`,
 * whose diag already holds what went wrong reading them. `t0` is when
 * the load began, for out->seconds. */
static void load_keys(const struct xd_schema *schema,
		      struct xd_snapkey *keys, size_t nkeys,
		      struct xd_snapshot *const *prev, size_t nprev,
		      struct xd_parsed_cache *cache, struct xd_load *out,
		      const struct timespec *t0)
{
	struct xd_section sections[NSECTIONS];
	struct xd_parsed **pfs = NULL;
	size_t npfs = 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = cores < 1 ? 1 : cores > 8 ? 8 : (unsigned)cores;
	struct timespec t1;

	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *info = xd_rtype_info((enum xd_rtype)t);

		sections[t].key = info->snapshot_key;
		sections[t].type = xd_schema_find_message(schema, info->message);
		/* a resource that fails is still named, for check_refs */
		sections[t].name_key = info->name_field;
		if (sections[t].type == NULL)
			xd_diag_add(&out->diag, "the schema has no message %s",
				    info->message);
	}
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		const struct xd_ctype_info *ci = xd_ctype_info((enum xd_ctype)c);
		struct xd_section *sec = &sections[XD_RTYPE_COUNT + c];

		sec->key = ci->snapshot_key;
		sec->type = xd_schema_find_message(schema, ci->message);
		sec->name_key = "@name";
		if (sec->type == NULL)
			xd_diag_add(&out->diag, "the schema has no message %s",
				    ci->message);
	}
	for (size_t i = 1; i < nprev; i++)
		XD_ASSERT_INFO(strcmp(xd_snapshot_key(prev[i - 1]),
				      xd_snapshot_key(prev[i])) < 0,
			       "previous snapshots out of order at '%s'",
			       xd_snapshot_key(prev[i]));
	if (xd_diag_total(&out->diag) == 0) {
		size_t files = 0;

		for (size_t i = 0; i < nkeys; i++)
			files += keys[i].nfiles;
		pfs = xd_calloc(files + 1, sizeof(*pfs));
		out->snaps = xd_calloc(nkeys + 1, sizeof(*out->snaps));
		for (size_t i = 0; i < nkeys; i++) {
			struct xd_snapshot *s;

			for (size_t f = 0; f < keys[i].nfiles; f++) {
				out->files++;
				out->read += !keys[i].files[f].unchanged;
				out->bytes += keys[i].files[f].len;
			}
			s = load_key(schema, sections, &keys[i], threads, prev,
				     nprev, cache, pfs + npfs, out);
			npfs += keys[i].nfiles;
			XD_ASSERT(out->nsnaps < nkeys); /* one per key */
			if (s != NULL)
				out->snaps[out->nsnaps++] = s;
		}
	}
	/* Kept whatever the outcome: a file is known by its bytes, so a
	 * broken one is parsed again only once it changes, and the good
	 * ones beside it not at all. */
	if (cache != NULL)
		xd_parsed_cache_keep(cache, pfs, npfs);
	for (size_t i = 0; i < npfs; i++)
		xd_parsed_unref(pfs[i]);
	free(pfs);
	out->rc = xd_diag_total(&out->diag) == 0 ? 0 : -1;
	if (out->rc != 0) {
		/* all or nothing */
		for (size_t i = 0; i < out->nsnaps; i++)
			xd_snapshot_unref(out->snaps[i]);
		out->nsnaps = 0;
		xd_snapdir_free(keys, nkeys);
	} else {
		out->keys = keys;
		out->nkeys = nkeys;
		/* the keys come in the order of their files' names, which is
		 * not always theirs ("a-b.yaml" before "a.yaml") */
		qsort(out->snaps, out->nsnaps, sizeof(*out->snaps), by_key);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->seconds = (double)(t1.tv_sec - t0->tv_sec) +
		       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The first half of xd_load_dir: `dir` read, into `out` its errors;
 * the files `cache` (may be NULL) finds unchanged taken from it. */
int xd_load_read_dir(const char *dir, struct xd_parsed_cache *cache,
		     struct xd_snapkey **keys, size_t *nkeys,
		     struct xd_diag *diag)
{
	size_t before = xd_diag_total(diag);

	*keys = NULL;
	*nkeys = 0;
	xd_snapdir_read(dir, cache != NULL ? xd_parsed_cache_known : NULL,
			cache, keys, nkeys, diag);
	if (xd_diag_total(diag) == before && *nkeys == 0)
		/* Nothing to serve is never what an operator meant: at
		 * start-up and on reload alike it would leave every node
		 * without configuration. */
		xd_diag_add(diag, "%s: no snapshot files (write %s/default.yaml for every node, or %s/<key>.yaml for the nodes of one key)",
			    dir, dir, dir);
	return xd_diag_total(diag) == before ? 0 : -1;
}

static void read_dir(const char *dir, struct xd_parsed_cache *cache,
		     struct xd_snapkey **keys, size_t *nkeys,
		     struct xd_load *out, struct timespec *t0)
{
	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, t0);
	xd_load_read_dir(dir, cache, keys, nkeys, &out->diag);
}

void xd_load_dir_cached(const struct xd_schema *schema, const char *dir,
			struct xd_snapshot *const *prev, size_t nprev,
			struct xd_parsed_cache *cache, struct xd_load *out)
{
	struct xd_snapkey *keys;
	size_t nkeys;
	struct timespec t0;

	read_dir(dir, cache, &keys, &nkeys, out, &t0);
	load_keys(schema, keys, nkeys, prev, nprev, cache, out, &t0);
}

void xd_load_dir(const struct xd_schema *schema, const char *dir,
		 struct xd_snapshot *const *prev, size_t nprev,
		 struct xd_load *out)
{
	xd_load_dir_cached(schema, dir, prev, nprev, NULL, out);
}

void xd_load_keys_cached(const struct xd_schema *schema,
			 struct xd_snapkey *keys, size_t nkeys,
			 struct xd_diag *read_errors,
			 struct xd_snapshot *const *prev, size_t nprev,
			 struct xd_parsed_cache *cache, struct xd_load *out)
{
	struct timespec t0;

	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	xd_diag_append(&out->diag, read_errors);
	load_keys(schema, keys, nkeys, prev, nprev, cache, out, &t0);
}

void xd_load_keys(const struct xd_schema *schema, struct xd_snapkey *keys,
		  size_t nkeys, struct xd_diag *read_errors,
		  struct xd_snapshot *const *prev, size_t nprev,
		  struct xd_load *out)
{
	xd_load_keys_cached(schema, keys, nkeys, read_errors, prev, nprev,
			    NULL, out);
}

struct xd_snapshot **xd_load_take(struct xd_load *l, size_t *n)
{
	struct xd_snapshot **v = l->snaps;

	/* a load succeeds whole or yields nothing */
	XD_ASSERT(l->rc == 0 || l->nsnaps == 0);
	*n = l->nsnaps;
	l->snaps = NULL;
	l->nsnaps = 0;
	return v;
}

enum xd_open_reach xd_open_reach_of(const struct xd_config *cfg)
{
	if (cfg->tls.client_ca == NULL)
		return XD_OPEN_NOBODY;
	return cfg->nauthorize == 0 ? XD_OPEN_ANY_NODE : XD_OPEN_KEY_NODES;
}

/*
 * Plaintext, TLS without client certificates and REST-JSON never carry
 * a certificate; gRPC gives a verified certificate without SAN or
 * common name the empty identity, which "*" matches: hence "if any".
 */
void xd_load_warn_open(const struct xd_load *l, enum xd_open_reach reach,
		       FILE *out)
{
	for (size_t i = 0; i < l->nopen; i++) {
		const struct xd_open_secret *o = &l->open[i];

		switch (reach) {
		case XD_OPEN_NOBODY:
			fprintf(out, "warning: %s '%s': no \"@allow\": no client may fetch it: without \"@allow\" a secret is served only to clients with a certificate that tls.client_ca verifies, and tls.client_ca is not set\n",
				o->where, o->name);
			break;
		case XD_OPEN_ANY_NODE:
			fprintf(out, "warning: %s '%s': no \"@allow\": every client with a certificate that tls.client_ca verifies may fetch it, whatever identity it names, if any: with no authorize rules, any such client may claim a node of snapshot '%s'\n",
				o->where, o->name, o->key);
			break;
		case XD_OPEN_KEY_NODES:
			fprintf(out, "warning: %s '%s': no \"@allow\": every client of snapshot '%s' with a certificate that tls.client_ca verifies may fetch it, whatever identity it names, if any\n",
				o->where, o->name, o->key);
			break;
		case XD_OPEN_UNKNOWN:
			fprintf(out, "warning: %s '%s': no \"@allow\": every client of snapshot '%s' with a certificate that the daemon's tls.client_ca verifies may fetch it, whatever identity it names, if any (none, without tls.client_ca)\n",
				o->where, o->name, o->key);
			break;
		}
	}
	if (l->open_dropped > 0)
		fprintf(out, "warning: %zu more secrets without \"@allow\"\n",
			l->open_dropped);
}

void xd_load_free(struct xd_load *l)
{
	for (size_t i = 0; i < l->nsnaps; i++)
		xd_snapshot_unref(l->snaps[i]);
	free(l->snaps);
	xd_diag_clear(&l->diag);
	for (size_t i = 0; i < l->nopen; i++) {
		free(l->open[i].where);
		free(l->open[i].name);
		free(l->open[i].key);
	}
	free(l->open);
	xd_snapdir_free(l->keys, l->nkeys);
	memset(l, 0, sizeof(*l));
}
