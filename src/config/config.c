#include "config/config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "util/text.h"
#include "util/xalloc.h"

/* A config file is a few dozen lines; anything far larger is a mistake
 * (a snapshot passed as --config, say) and is refused early. */
#define CONFIG_MAX_BYTES (1u << 20)

enum dtype {
	T_ADDRESS,
	T_PATH,
	T_CHOICE,   /* one of `choices`, stored as its index (an enum) */
	T_DURATION, /* stored in milliseconds */
	T_SIZE,     /* stored in bytes */
	T_UINT,
};

struct directive {
	const char *name;
	enum dtype type;
	size_t offset;
	const char *def; /* as written in the file; NULL: given to init */
	uint64_t min, max; /* bounds of numbers (max 0: none) */
	bool zero_ok;      /* 0 allowed below min, meaning "off" */
	const char *doc;
	const char *const *choices; /* T_CHOICE: NULL-terminated */
};

static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const node_keys[] = {"cluster", "id", NULL};

#define OFF(field) offsetof(struct xd_config, field)
#define HOUR_MS (3600ull * 1000)

/* Keep in step with man/xdsd.yaml.5 and etc/xdsd.yaml. */
static const struct directive directives[] = {
	{"listen", T_ADDRESS, OFF(listen), "127.0.0.1:18000", 0, 0, false,
	 "address the xDS gRPC server listens on", NULL},
	{"snapshots", T_PATH, OFF(snapshots), NULL, 0, 0, false,
	 "directory of snapshot files", NULL},
	{"schema", T_PATH, OFF(schema), NULL, 0, 0, false,
	 "Envoy API descriptor set", NULL},
	{"log_level", T_CHOICE, OFF(log_level), "info", 0, 0, false,
	 "error, warn, info or debug", log_levels},
	{"node_key", T_CHOICE, OFF(node_key), "cluster", 0, 0, false,
	 "node field that selects its snapshot: cluster or id", node_keys},
	{"keepalive_time", T_DURATION, OFF(keepalive_time_ms), "30s", 1000,
	 24 * HOUR_MS, true, "idle time before the server pings a client (0: never)", NULL},
	{"keepalive_timeout", T_DURATION, OFF(keepalive_timeout_ms), "10s",
	 1000, HOUR_MS, false,
	 "time a ping may go unanswered before the connection is closed", NULL},
	{"min_client_ping_interval", T_DURATION,
	 OFF(min_client_ping_interval_ms), "5s", 0, HOUR_MS, true,
	 "shortest keepalive ping interval a client may use", NULL},
	{"max_connection_age", T_DURATION, OFF(max_connection_age_ms), "0",
	 1000, 365 * 24 * HOUR_MS, true,
	 "close connections after this age to rebalance clients (0: never)", NULL},
	{"max_connection_age_grace", T_DURATION,
	 OFF(max_connection_age_grace_ms), "1m", 0, 24 * HOUR_MS, true,
	 "time streams get to end after max_connection_age", NULL},
	{"handshake_timeout", T_DURATION, OFF(handshake_timeout_ms), "10s",
	 100, HOUR_MS, false,
	 "time a new connection gets to finish its handshake", NULL},
	{"max_streams_per_connection", T_UINT,
	 OFF(max_streams_per_connection), "100", 1, 1u << 20, false,
	 "concurrent streams one client connection may open", NULL},
	{"max_request_size", T_SIZE, OFF(max_request_size), "4MiB", 1024,
	 1ull << 30, false, "largest request message accepted", NULL},
};

#define NDIRECTIVES (sizeof(directives) / sizeof(directives[0]))

static const struct directive *find_directive(const char *name)
{
	for (size_t i = 0; i < NDIRECTIVES; i++)
		if (strcmp(directives[i].name, name) == 0)
			return &directives[i];
	return NULL;
}

static const char *suggest(const char *name)
{
	const char *best = NULL;
	size_t best_d = 3; /* suggest only close misspellings */

	for (size_t i = 0; i < NDIRECTIVES; i++) {
		/* Plain edits, case-sensitive, as directive names are
		 * matched. */
		size_t d = xd_text_distance(name, strlen(name),
					    directives[i].name,
					    strlen(directives[i].name), 0);

		if (d < best_d) {
			best_d = d;
			best = directives[i].name;
		}
	}
	return best;
}

/* ---- value parsers: return NULL on success, else the reason ---- */

static const char *parse_uint(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return "not a non-negative integer";
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return "number too large";
	if (*end != '\0')
		return "not a non-negative integer";
	*out = v;
	return NULL;
}

/* "1.5s", "250ms", "2m", "1h", or "0". */
static const char *parse_duration(const char *s, uint64_t *ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
	char *end;
	double v;

	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return NULL;
	}
	if (*s < '0' || *s > '9')
		return "not a duration (examples: 500ms, 30s, 5m, 1h)";
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE || v > 1e15)
		return "duration too large";
	if (end == s || *end == '\0')
		return "duration needs a unit: ms, s, m or h";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*ms = (uint64_t)(v * units[i].ms + 0.5);
			return NULL;
		}
	}
	return "unknown duration unit (use ms, s, m or h)";
}

/* "4194304", "512KiB", "4MiB", "1GiB" (K/M/G and KB/MB/GB mean the same). */
static const char *parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {{"", 0},    {"B", 0},    {"K", 10},  {"KB", 10},
		     {"KiB", 10}, {"M", 20},  {"MB", 20}, {"MiB", 20},
		     {"G", 30},  {"GB", 30}, {"GiB", 30}};
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return "not a size (examples: 65536, 512KiB, 4MiB)";
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v > (1ull << 40))
		return "size too large";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*bytes = (uint64_t)v << units[i].shift;
			return NULL;
		}
	}
	return "unknown size unit (use KiB, MiB or GiB)";
}

/* One of the directive's words; the message lists them all. */
static const char *parse_choice(const struct directive *d, const char *s,
				int *out, char *why, size_t len)
{
	size_t n = 0;

	for (int i = 0; d->choices[i] != NULL; i++) {
		if (strcmp(s, d->choices[i]) == 0) {
			*out = i;
			return NULL;
		}
	}
	n += (size_t)snprintf(why, len, "must be ");
	for (int i = 0; d->choices[i] != NULL && n < len; i++)
		n += (size_t)snprintf(why + n, len - n, "%s%s",
				      i == 0 ? "" :
				      d->choices[i + 1] == NULL ? " or " : ", ",
				      d->choices[i]);
	return why;
}

/* host:port, [v6]:port or unix:/path; port 0 means "any free port". */
static const char *parse_address(const char *s)
{
	const char *colon, *host_end;
	uint64_t port;

	if (strncmp(s, "unix:", 5) == 0)
		return s[5] != '\0' ? NULL : "unix: address without a path";
	if (s[0] == '[') {
		host_end = strchr(s, ']');
		if (host_end == NULL || host_end == s + 1)
			return "bad IPv6 address (form: [::1]:18000)";
		colon = host_end + 1;
		if (*colon != ':')
			return "missing :port after ]";
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return "missing :port (form: host:port)";
		if (colon == s)
			return "missing host (use 0.0.0.0:port for every address)";
		if (memchr(s, ':', (size_t)(colon - s)) != NULL)
			return "IPv6 addresses need brackets: [::]:18000";
	}
	if (parse_uint(colon + 1, &port) != NULL || port > 65535)
		return "port must be a number from 0 to 65535";
	return NULL;
}

/* Writes a number back in the directive's own notation. */
static void format_number(char *buf, size_t len, enum dtype type, uint64_t n)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} dur[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}},
	  size[] = {{1u << 30, "GiB"}, {1u << 20, "MiB"}, {1u << 10, "KiB"},
		    {1, ""}};
	const __typeof__(dur[0]) *u = type == T_DURATION ? dur : size;

	if (type == T_UINT || n == 0) {
		snprintf(buf, len, "%" PRIu64, n);
		return;
	}
	while (n % u->div != 0)
		u++;
	snprintf(buf, len, "%" PRIu64 "%s", n / u->div, u->unit);
}

static char *join_path(const char *dir, const char *value)
{
	if (value[0] == '/' || dir == NULL || dir[0] == '\0')
		return xd_strdup(value);
	return xd_asprintf("%s/%s", dir, value);
}

static void replace_str(char **slot, char *value)
{
	free(*slot);
	*slot = value;
}

/*
 * Applies one value. `where` prefixes messages ("file:3:11" or
 * "--listen"); `dir` is the base for relative paths (NULL: cwd).
 */
static int apply(struct xd_config *cfg, const struct directive *d,
		 const char *value, const char *where, const char *dir,
		 struct xd_diag *diag)
{
	char *base = (char *)cfg + d->offset;
	const char *why = NULL;
	char bound[32], range[128];
	uint64_t n = 0;

	if (value[0] == '\0') {
		xd_diag_add(diag, "%s: '%s': empty value", where, d->name);
		return -1;
	}
	switch (d->type) {
	case T_ADDRESS:
		why = parse_address(value);
		if (why == NULL)
			replace_str((char **)base, xd_strdup(value));
		break;
	case T_PATH:
		replace_str((char **)base, join_path(dir, value));
		break;
	case T_CHOICE:
		why = parse_choice(d, value, (int *)(void *)base, range,
				   sizeof(range));
		break;
	case T_DURATION:
	case T_SIZE:
	case T_UINT:
		why = d->type == T_DURATION ? parse_duration(value, &n) :
		      d->type == T_SIZE     ? parse_size(value, &n) :
					      parse_uint(value, &n);
		if (why == NULL && n < d->min && !(n == 0 && d->zero_ok)) {
			format_number(bound, sizeof(bound), d->type, d->min);
			snprintf(range, sizeof(range), "below the minimum %s%s",
				 bound, d->zero_ok ? " (0 turns it off)" : "");
			why = range;
		} else if (why == NULL && d->max != 0 && n > d->max) {
			format_number(bound, sizeof(bound), d->type, d->max);
			snprintf(range, sizeof(range), "above the maximum %s",
				 bound);
			why = range;
		}
		if (why == NULL)
			*(uint64_t *)(void *)base = n;
		break;
	}
	if (why != NULL) {
		xd_diag_add(diag, "%s: '%s': bad value '%s': %s", where,
			    d->name, value, why);
		return -1;
	}
	return 0;
}

void xd_config_init(struct xd_config *cfg, const char *snapshots,
		    const char *schema)
{
	struct xd_diag diag = XD_DIAG_INIT;

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NDIRECTIVES; i++) {
		const struct directive *d = &directives[i];

		if (d->def != NULL)
			apply(cfg, d, d->def, "default", NULL, &diag);
	}
	cfg->snapshots = xd_strdup(snapshots);
	cfg->schema = xd_strdup(schema);
	/* The defaults above are constants; one that fails is a bug. */
	if (xd_diag_total(&diag) != 0) {
		xd_diag_print(&diag, stderr);
		xd_panic(__FILE__, __LINE__, "a built-in default is invalid");
	}
}

int xd_config_set(struct xd_config *cfg, const char *key, const char *value,
		  const char *origin, struct xd_diag *diag)
{
	const struct directive *d = find_directive(key);

	if (d == NULL) {
		xd_diag_add(diag, "%s: unknown directive '%s'", origin, key);
		return -1;
	}
	return apply(cfg, d, value, origin, NULL, diag);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xd_strdup("");
	if (slash == path)
		return xd_strdup("/");
	return xd_strndup(path, (size_t)(slash - path));
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return "a scalar";
	}
}

static int load_document(struct xd_config *cfg, const char *path,
			 yaml_document_t *doc, struct xd_diag *diag)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	const struct directive *seen_at[NDIRECTIVES] = {0};
	size_t seen_line[NDIRECTIVES] = {0};
	char *dir = dir_of(path);
	int rc = 0;

	if (root == NULL)
		goto out; /* an empty file: every default */
	if (root->type != YAML_MAPPING_NODE) {
		xd_diag_add(diag, "%s:%zu:%zu: the configuration must be a mapping of directives, not %s",
			    path, root->start_mark.line + 1,
			    root->start_mark.column + 1, node_kind(root));
		rc = -1;
		goto out;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		size_t line = k->start_mark.line + 1;
		size_t col = k->start_mark.column + 1;
		const struct directive *d;
		const char *key;
		char where[PATH_MAX + 64];

		if (k->type != YAML_SCALAR_NODE) {
			xd_diag_add(diag, "%s:%zu:%zu: keys must be plain names, not %s",
				    path, line, col, node_kind(k));
			rc = -1;
			continue;
		}
		key = (const char *)k->data.scalar.value;
		d = find_directive(key);
		if (d == NULL) {
			const char *s = suggest(key);

			xd_diag_add(diag, "%s:%zu:%zu: unknown directive '%s'%s%s%s",
				    path, line, col, key,
				    s ? " (did you mean '" : "", s ? s : "",
				    s ? "'?)" : "");
			rc = -1;
			continue;
		}
		if (seen_at[d - directives] != NULL) {
			xd_diag_add(diag, "%s:%zu:%zu: '%s' is set twice (first on line %zu)",
				    path, line, col, key,
				    seen_line[d - directives]);
			rc = -1;
			continue;
		}
		seen_at[d - directives] = d;
		seen_line[d - directives] = line;
		snprintf(where, sizeof(where), "%s:%zu:%zu", path,
			 v->start_mark.line + 1, v->start_mark.column + 1);
		if (v->type != YAML_SCALAR_NODE) {
			xd_diag_add(diag, "%s: '%s': expected a single value, not %s",
				    where, key, node_kind(v));
			rc = -1;
			continue;
		}
		if (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    (v->data.scalar.length == 0 ||
		     strcmp((char *)v->data.scalar.value, "~") == 0 ||
		     strcmp((char *)v->data.scalar.value, "null") == 0)) {
			xd_diag_add(diag, "%s: '%s': missing value", where, key);
			rc = -1;
			continue;
		}
		if (strlen((char *)v->data.scalar.value) != v->data.scalar.length) {
			xd_diag_add(diag, "%s: '%s': value contains a NUL byte",
				    where, key);
			rc = -1;
			continue;
		}
		if (apply(cfg, d, (const char *)v->data.scalar.value, where,
			  dir, diag) != 0)
			rc = -1;
	}
out:
	free(dir);
	return rc;
}

int xd_config_load(struct xd_config *cfg, const char *path,
		   struct xd_diag *diag)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct stat st;
	FILE *f;
	int rc = -1;

	f = fopen(path, "rb");
	if (f == NULL) {
		xd_diag_add(diag, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		xd_diag_add(diag, "%s: not a regular file", path);
		fclose(f);
		return -1;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		xd_diag_add(diag, "%s: %lld bytes: too large for a configuration file (limit %u)",
			    path, (long long)st.st_size, CONFIG_MAX_BYTES);
		fclose(f);
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		xd_diag_add(diag, "%s:%zu:%zu: %s%s%s", path,
			    parser.problem_mark.line + 1,
			    parser.problem_mark.column + 1,
			    parser.problem ? parser.problem : "syntax error",
			    parser.context ? " " : "",
			    parser.context ? parser.context : "");
		goto out;
	}
	rc = load_document(cfg, path, &doc, diag);
	yaml_document_delete(&doc);
	if (rc == 0) {
		/* A second document is almost certainly a stray "---". */
		if (!yaml_parser_load(&parser, &doc)) {
			xd_diag_add(diag, "%s:%zu:%zu: %s", path,
				    parser.problem_mark.line + 1,
				    parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "syntax error");
			rc = -1;
		} else {
			yaml_node_t *extra = yaml_document_get_root_node(&doc);

			if (extra != NULL) {
				xd_diag_add(diag, "%s:%zu:%zu: only one YAML document is allowed",
					    path, extra->start_mark.line + 1,
					    extra->start_mark.column + 1);
				rc = -1;
			}
			yaml_document_delete(&doc);
		}
	}
out:
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

void xd_config_print(const struct xd_config *cfg, FILE *out)
{
	for (size_t i = 0; i < NDIRECTIVES; i++) {
		const struct directive *d = &directives[i];
		const char *base = (const char *)cfg + d->offset;
		char num[32];

		fprintf(out, "%s: ", d->name);
		switch (d->type) {
		case T_ADDRESS:
		case T_PATH:
			/* Quoted: "[::]:1" would otherwise read back as a list. */
			fputc('\'', out);
			for (const char *c = *(char *const *)(const void *)base;
			     *c != '\0'; c++) {
				if (*c == '\'')
					fputc('\'', out);
				fputc(*c, out);
			}
			fputc('\'', out);
			break;
		case T_CHOICE:
			fputs(d->choices[*(const int *)(const void *)base], out);
			break;
		case T_DURATION:
		case T_SIZE:
		case T_UINT:
			format_number(num, sizeof(num), d->type,
				      *(const uint64_t *)(const void *)base);
			fputs(num, out);
			break;
		}
		fprintf(out, "    # %s\n", d->doc);
	}
}

void xd_config_free(struct xd_config *cfg)
{
	free(cfg->listen);
	free(cfg->snapshots);
	free(cfg->schema);
	memset(cfg, 0, sizeof(*cfg));
}
