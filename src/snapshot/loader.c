#include "snapshot/loader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "schema/transcode.h"
#include "schema/walk.h"

/* ---------------- the directory ---------------- */

struct key_files {
	char *key;
	char **files; /* full paths, sorted */
	size_t nfiles;
};

static int has_ext(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ? 5 :
	       (n > 4 && strcmp(name + n - 4, ".yml") == 0)  ? 4 :
	       (n > 5 && strcmp(name + n - 5, ".json") == 0) ? 5 : 0;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of `dir` (hidden ones skipped). */
static char **read_names(const char *dir, size_t *n, int *err)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL) {
		*err = errno;
		return NULL;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			v = realloc(v, cap * sizeof(*v));
			if (v == NULL)
				abort();
		}
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), by_str);
	*err = 0;
	return v;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char *join(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		abort();
	return p;
}

static struct key_files *add_key(struct key_files **keys, size_t *n,
				 const char *key, char *first_file,
				 struct xd_diag *diag)
{
	struct key_files *k;

	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*keys)[i].key, key) == 0) {
			xd_diag_add(diag, "%s: snapshot '%s' is also defined by %s",
				    first_file, key,
				    (*keys)[i].nfiles ? (*keys)[i].files[0] : "a directory");
			free(first_file);
			return NULL;
		}
	}
	*keys = realloc(*keys, (*n + 1) * sizeof(**keys));
	if (*keys == NULL)
		abort();
	k = &(*keys)[(*n)++];
	k->key = strdup(key);
	k->files = NULL;
	k->nfiles = 0;
	if (first_file != NULL) {
		k->files = malloc(sizeof(*k->files));
		if (k->files == NULL)
			abort();
		k->files[k->nfiles++] = first_file;
	}
	return k;
}

static int list_dir(const char *dir, struct key_files **keys, size_t *nkeys,
		    struct xd_diag *diag)
{
	size_t n;
	int err;
	char **names = read_names(dir, &n, &err);

	*keys = NULL;
	*nkeys = 0;
	if (names == NULL && err != 0) {
		xd_diag_add(diag, "%s: cannot read the snapshot directory: %s",
			    dir, strerror(err));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char *path = join(dir, names[i]);
		struct stat st;
		int ext = has_ext(names[i]);

		if (stat(path, &st) != 0) {
			xd_diag_add(diag, "%s: %s", path, strerror(errno));
			free(path);
		} else if (S_ISDIR(st.st_mode)) {
			size_t m;
			char **inner = read_names(path, &m, &err);
			struct key_files *k;

			if (inner == NULL && err != 0) {
				xd_diag_add(diag, "%s: %s", path, strerror(err));
				free(path);
				continue;
			}
			k = add_key(keys, nkeys, names[i], NULL, diag);
			for (size_t j = 0; k != NULL && j < m; j++) {
				if (!has_ext(inner[j]))
					continue;
				k->files = realloc(k->files,
						   (k->nfiles + 1) * sizeof(*k->files));
				if (k->files == NULL)
					abort();
				k->files[k->nfiles++] = join(path, inner[j]);
			}
			free_names(inner, m);
			free(path);
		} else if (S_ISREG(st.st_mode) && ext != 0) {
			char *key = strndup(names[i], strlen(names[i]) - (size_t)ext);

			add_key(keys, nkeys, key, path, diag);
			free(key);
		} else {
			free(path); /* not a snapshot: READMEs and the like */
		}
	}
	free_names(names, n);
	return xd_diag_total(diag) == 0 ? 0 : -1;
}

static void free_keys(struct key_files *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(keys[i].key);
		free_names(keys[i].files, keys[i].nfiles);
	}
	free(keys);
}

/* ---------------- one snapshot ---------------- */

static const char *const nouns[XD_RTYPE_COUNT] = {
	[XD_SECRET] = "secret",
	[XD_RUNTIME] = "runtime",
	[XD_CLUSTER] = "cluster",
	[XD_ENDPOINT] = "endpoints",
	[XD_LISTENER] = "listener",
	[XD_ROUTE] = "route configuration",
	[XD_SCOPED_ROUTE] = "scoped route",
	[XD_VIRTUAL_HOST] = "virtual host",
};

struct refs {
	struct xd_ref *v;
	size_t n, cap;
	char **aliases;
	size_t naliases, cap_aliases;
};

struct build {
	const struct xd_schema *schema;
	const struct xd_section *sections;
	struct xd_table_builder *b[XD_RTYPE_COUNT];
	struct xd_diag *diag;
	const char *file;
	struct refs refs;
	enum xd_rtype walking; /* type of the refs being collected */
	char *first;           /* the first string a walk found */
	bool bad_string;
};

/* A string value found by a walk: its first occurrence. */
static void take_first(const uint8_t *value, size_t len, void *arg)
{
	struct build *bd = arg;

	if (bd->first != NULL)
		return;
	if (memchr(value, '\0', len) != NULL) {
		bd->bad_string = true;
		return;
	}
	bd->first = strndup((const char *)value, len);
}

static void add_ref(const uint8_t *value, size_t len, void *arg)
{
	struct build *bd = arg;
	struct refs *r = &bd->refs;

	if (len == 0 || memchr(value, '\0', len) != NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].type == bd->walking && strlen(r->v[i].name) == len &&
		    memcmp(r->v[i].name, value, len) == 0)
			return;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (r->v == NULL)
			abort();
	}
	r->v[r->n].type = bd->walking;
	r->v[r->n++].name = strndup((const char *)value, len);
}

static void refs_clear(struct refs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free((char *)r->v[i].name);
	for (size_t i = 0; i < r->naliases; i++)
		free(r->aliases[i]);
	r->n = 0;
	r->naliases = 0;
}

/* What each type refers to, as field paths (through Anys). */
struct ref_path {
	enum xd_rtype from, to;
	const char *path;
};

static const struct ref_path ref_paths[] = {
	{XD_LISTENER, XD_ROUTE, "filter_chains.filters.typed_config.rds.route_config_name"},
	{XD_LISTENER, XD_ROUTE, "default_filter_chain.filters.typed_config.rds.route_config_name"},
	{XD_LISTENER, XD_ROUTE, "api_listener.api_listener.rds.route_config_name"},
	{XD_ROUTE, XD_CLUSTER, "virtual_hosts.routes.route.cluster"},
	{XD_ROUTE, XD_CLUSTER, "virtual_hosts.routes.route.weighted_clusters.clusters.name"},
	{XD_ROUTE, XD_CLUSTER, "virtual_hosts.routes.route.request_mirror_policies.cluster"},
	{XD_VIRTUAL_HOST, XD_CLUSTER, "routes.route.cluster"},
	{XD_VIRTUAL_HOST, XD_CLUSTER, "routes.route.weighted_clusters.clusters.name"},
	{XD_VIRTUAL_HOST, XD_CLUSTER, "routes.route.request_mirror_policies.cluster"},
	{XD_SCOPED_ROUTE, XD_ROUTE, "route_configuration_name"},
};

/* A string field of the message, or NULL (strdup'd). */
static char *field_string(struct build *bd, enum xd_rtype t,
			  const struct xd_item *it, const char *path)
{
	bd->first = NULL;
	bd->bad_string = false;
	xd_pb_walk(bd->schema, bd->sections[t].type, it->data, it->len, path,
		   take_first, bd);
	return bd->first;
}

static void varint_visit(const uint8_t *value, size_t len, void *arg)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len && i < 10; i++)
		v |= (uint64_t)(value[i] & 0x7f) << (7 * i);
	*(uint64_t *)arg = v;
}

/* An EDS cluster refers to the endpoints named by its service_name, or
 * by its own name. */
static void cluster_refs(struct build *bd, const struct xd_item *it,
			 const char *name)
{
	uint64_t type = 0; /* DiscoveryType; absent means STATIC */
	char *service;

	xd_pb_walk(bd->schema, bd->sections[XD_CLUSTER].type, it->data, it->len,
		   "type", varint_visit, &type);
	if (type != 3) /* EDS */
		return;
	service = field_string(bd, XD_CLUSTER, it, "eds_cluster_config.service_name");
	bd->walking = XD_ENDPOINT;
	if (service != NULL && service[0] != '\0')
		add_ref((const uint8_t *)service, strlen(service), bd);
	else
		add_ref((const uint8_t *)name, strlen(name), bd);
	free(service);
}

static void add_alias(struct refs *r, char *alias)
{
	if (r->naliases == r->cap_aliases) {
		r->cap_aliases = r->cap_aliases ? r->cap_aliases * 2 : 8;
		r->aliases = realloc(r->aliases, r->cap_aliases * sizeof(char *));
		if (r->aliases == NULL)
			abort();
	}
	r->aliases[r->naliases++] = alias;
}

struct alias_walk {
	struct refs *r;
	const char *prefix;
	size_t prefix_len;
};

static void domain_alias(const uint8_t *value, size_t len, void *arg)
{
	struct alias_walk *a = arg;
	char *alias;

	if (memchr(value, '\0', len) != NULL)
		return;
	if (asprintf(&alias, "%.*s/%.*s", (int)a->prefix_len, a->prefix,
		     (int)len, (const char *)value) < 0)
		abort();
	add_alias(a->r, alias);
}

static int on_item(const struct xd_item *it, void *arg)
{
	struct build *bd = arg;
	enum xd_rtype t = (enum xd_rtype)(it->section - bd->sections);
	const struct xd_entry *first;
	char *name;

	name = field_string(bd, t, it, t == XD_ENDPOINT ? "cluster_name" : "name");
	if (name == NULL || name[0] == '\0') {
		xd_diag_add(bd->diag, "%s:%u:%u: %s: %s without a %s", bd->file,
			    it->line, it->column, it->path, nouns[t],
			    bd->bad_string ? "valid name (NUL byte)" :
			    t == XD_ENDPOINT ? "cluster_name" : "name");
		free(name);
		return 0;
	}
	refs_clear(&bd->refs);
	for (size_t i = 0; i < sizeof(ref_paths) / sizeof(ref_paths[0]); i++) {
		if (ref_paths[i].from != t)
			continue;
		bd->walking = ref_paths[i].to;
		xd_pb_walk(bd->schema, bd->sections[t].type, it->data, it->len,
			   ref_paths[i].path, add_ref, bd);
	}
	if (t == XD_CLUSTER)
		cluster_refs(bd, it, name);
	if (t == XD_VIRTUAL_HOST) {
		/* "<route configuration>/<name>": served to that route
		 * configuration, found by "<route configuration>/<domain>" */
		const char *slash = strchr(name, '/');

		if (slash == NULL || slash == name) {
			xd_diag_add(bd->diag, "%s:%u:%u: %s: virtual host '%s' must be named '<route configuration>/<name>'",
				    bd->file, it->line, it->column, it->path, name);
			free(name);
			return 0;
		}
		struct alias_walk aw = {&bd->refs, name, (size_t)(slash - name)};

		bd->walking = XD_ROUTE;
		add_ref((const uint8_t *)name, (size_t)(slash - name), bd);
		xd_pb_walk(bd->schema, bd->sections[t].type, it->data, it->len,
			   "domains", domain_alias, &aw);
	}
	if (xd_table_builder_add(bd->b[t], name, it->data, it->len,
				 bd->refs.v, bd->refs.n,
				 (const char *const *)bd->refs.aliases,
				 bd->refs.naliases, bd->file, it->line, &first) != 0)
		xd_diag_add(bd->diag, "%s:%u:%u: %s: duplicate %s '%s' (first at %s:%u)",
			    bd->file, it->line, it->column, it->path, nouns[t],
			    name, first->file, first->line);
	free(name);
	return 0;
}

static char *read_file(const char *path, size_t *len, struct xd_diag *diag)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fd < 0) {
		xd_diag_add(diag, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		xd_diag_add(diag, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if ((unsigned long long)st.st_size > XD_SNAPSHOT_MAX_FILE) {
		xd_diag_add(diag, "%s: %lld bytes: larger than the limit of %u MiB",
			    path, (long long)st.st_size, XD_SNAPSHOT_MAX_FILE >> 20);
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		abort();
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			xd_diag_add(diag, "%s: %s", path,
				    n < 0 ? strerror(errno) : "changed while read");
			free(buf);
			close(fd);
			return NULL;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

/*
 * Nothing but blanks and comments. Such a file is refused: a truncated
 * file must not tell every client to drop everything. An empty snapshot
 * is written `{}`.
 */
static bool blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
		} else if (text[i] != ' ' && text[i] != '\t' &&
			   text[i] != '\n' && text[i] != '\r') {
			return false;
		}
	}
	return true;
}

/* Every reference of every resource resolves (both ends named). */
static void check_refs(struct xd_table *tables[XD_RTYPE_COUNT],
		       struct xd_diag *diag)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		for (size_t i = 0; i < xd_table_count(tables[t]); i++) {
			const struct xd_entry *e = xd_table_at(tables[t], i);

			for (uint32_t k = 0; k < e->nrefs; k++) {
				const struct xd_ref *r = &e->refs[k];
				const struct xd_entry *to = xd_table_find(
					tables[r->type], r->name, strlen(r->name));

				if (to == NULL)
					xd_diag_add(diag, "%s:%u: %s '%s' refers to %s '%s', which is not in the snapshot",
						    e->file, e->line, nouns[t], e->name,
						    nouns[r->type], r->name);
			}
		}
	}
}

static struct xd_snapshot *load_key(const struct xd_schema *schema,
				    const struct xd_section *sections,
				    const struct key_files *k,
				    struct xd_snapshot *const *prev,
				    size_t nprev, struct xd_load *out)
{
	struct build bd = {.schema = schema, .sections = sections,
			   .diag = &out->diag};
	struct xd_table *tables[XD_RTYPE_COUNT] = {0};
	struct xd_snapshot *old = NULL, *snap = NULL;
	size_t errors = xd_diag_total(&out->diag);

	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		bd.b[t] = xd_table_builder_new((enum xd_rtype)t);
		if (bd.b[t] == NULL)
			abort();
	}
	for (size_t f = 0; f < k->nfiles; f++) {
		size_t len = 0;
		char *text = read_file(k->files[f], &len, &out->diag);
		size_t n = strlen(k->files[f]);

		if (text == NULL)
			continue;
		if (blank(text, len)) {
			xd_diag_add(&out->diag, "%s: the file is empty (a snapshot with no resources is written {})",
				    k->files[f]);
			free(text);
			continue;
		}
		out->files++;
		out->bytes += len;
		bd.file = k->files[f];
		if (n > 5 && strcmp(k->files[f] + n - 5, ".json") == 0)
			xd_transcode_json_file(schema, bd.file, text, len, sections,
					       XD_RTYPE_COUNT, on_item, &bd,
					       &out->diag);
		else
			xd_transcode_yaml_file(schema, bd.file, text, len, 1,
					       sections, XD_RTYPE_COUNT, on_item,
					       &bd, &out->diag);
		free(text);
	}
	refs_clear(&bd.refs);
	free(bd.refs.v);
	free(bd.refs.aliases);
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		tables[t] = xd_table_builder_finish(bd.b[t]);
		if (tables[t] == NULL)
			abort();
	}
	/* A resource refused above would only show up again as a missing
	 * reference: check references once every resource is good. */
	if (xd_diag_total(&out->diag) == errors)
		check_refs(tables, &out->diag);
	if (xd_diag_total(&out->diag) != errors) {
		for (int t = 0; t < XD_RTYPE_COUNT; t++)
			xd_table_unref(tables[t]);
		return NULL;
	}
	/* Reuse what did not change, so clients see no change there. */
	for (size_t i = 0; i < nprev; i++)
		if (strcmp(xd_snapshot_key(prev[i]), k->key) == 0)
			old = prev[i];
	for (int t = 0; old != NULL && t < XD_RTYPE_COUNT; t++) {
		struct xd_table *o = xd_snapshot_table(old, (enum xd_rtype)t);

		if (xd_table_vhash(o) == xd_table_vhash(tables[t])) {
			xd_table_unref(tables[t]);
			tables[t] = xd_table_ref(o);
		}
	}
	snap = xd_snapshot_new(k->key, tables);
	if (snap == NULL)
		abort();
	return snap;
}

void xd_load_dir(const struct xd_schema *schema, const char *dir,
		 struct xd_snapshot *const *prev, size_t nprev,
		 struct xd_load *out)
{
	struct xd_section sections[XD_RTYPE_COUNT];
	struct key_files *keys = NULL;
	size_t nkeys = 0;
	struct timespec t0, t1;

	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *info = xd_rtype_info((enum xd_rtype)t);

		sections[t].key = info->snapshot_key;
		sections[t].type = xd_schema_find_message(schema, info->message);
		if (sections[t].type == NULL)
			xd_diag_add(&out->diag, "the schema has no message %s",
				    info->message);
	}
	if (xd_diag_total(&out->diag) == 0 &&
	    list_dir(dir, &keys, &nkeys, &out->diag) == 0) {
		out->snaps = calloc(nkeys + 1, sizeof(*out->snaps));
		if (out->snaps == NULL)
			abort();
		for (size_t i = 0; i < nkeys; i++) {
			struct xd_snapshot *s = load_key(schema, sections, &keys[i],
							 prev, nprev, out);

			if (s != NULL)
				out->snaps[out->nsnaps++] = s;
		}
	}
	free_keys(keys, nkeys);
	out->rc = xd_diag_total(&out->diag) == 0 ? 0 : -1;
	if (out->rc != 0) {
		/* all or nothing */
		for (size_t i = 0; i < out->nsnaps; i++)
			xd_snapshot_unref(out->snaps[i]);
		out->nsnaps = 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

struct xd_snapshot **xd_load_take(struct xd_load *l, size_t *n)
{
	struct xd_snapshot **v = l->snaps;

	*n = l->nsnaps;
	l->snaps = NULL;
	l->nsnaps = 0;
	return v;
}

void xd_load_free(struct xd_load *l)
{
	for (size_t i = 0; i < l->nsnaps; i++)
		xd_snapshot_unref(l->snaps[i]);
	free(l->snaps);
	xd_diag_clear(&l->diag);
	memset(l, 0, sizeof(*l));
}
