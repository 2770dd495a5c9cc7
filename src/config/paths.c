/* SPDX-License-Identifier: Apache-2.0 */
#include "config/paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/paths_gen.h"
#include "util/xalloc.h"

/* the build tree's binaries: xdsd, and xdsctl (push checks with the
 * schema) */
#define TREE_BINARY XD_BUILD_DIR "/src/xdsd"
#define TREE_CTL XD_BUILD_DIR "/src/xdsctl/xdsctl"

static bool is(const char *exe, size_t n, const char *path)
{
	return n == strlen(path) && memcmp(exe, path, n) == 0;
}

void xd_paths_installed(struct xd_paths *out)
{
	out->config = XD_SYSCONF_DIR "/xdsd.yaml";
	out->snapshots = XD_SYSCONF_DIR "/snapshots";
	out->schema = XD_PKGDATA_DIR "/xds-api.pb";
	out->in_tree = false;
}

void xd_paths_defaults(struct xd_paths *out)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	xd_paths_installed(out);
	out->in_tree = n > 0 && (is(exe, (size_t)n, TREE_BINARY) ||
				 is(exe, (size_t)n, TREE_CTL));
	if (out->in_tree) {
		/* abs_top_srcdir of an out-of-tree build reads "build/..";
		 * resolve it so messages show a plain path. */
		static char src[PATH_MAX], config[PATH_MAX + 16],
			snapshots[PATH_MAX + 16];

		if (realpath(XD_SOURCE_DIR, src) == NULL)
			snprintf(src, sizeof(src), "%s", XD_SOURCE_DIR);
		snprintf(config, sizeof(config), "%s/etc/xdsd.yaml", src);
		snprintf(snapshots, sizeof(snapshots), "%s/snapshots", src);
		out->config = config;
		out->snapshots = snapshots;
		out->schema = XD_BUILD_DIR "/proto/xds-api.pb";
	}
}

char *xd_paths_state_dir(void)
{
	const char *v = getenv("STATE_DIRECTORY");
	size_t n;

	if (v == NULL || v[0] != '/')
		return NULL;
	n = strcspn(v, ":");
	return xd_strndup(v, n);
}

static void print_set(FILE *out, const struct xd_paths *p)
{
	fprintf(out, "  configuration file  %s\n", p->config);
	fprintf(out, "  snapshot directory  %s\n", p->snapshots);
	fprintf(out, "  schema file         %s\n", p->schema);
}

void xd_paths_print(FILE *out)
{
	struct xd_paths installed, used;

	xd_paths_installed(&installed);
	xd_paths_defaults(&used);
	fprintf(out, "installed defaults:\n");
	print_set(out, &installed);
	if (used.in_tree) {
		fprintf(out, "run from its build tree %s, it uses instead:\n",
			XD_BUILD_DIR);
		print_set(out, &used);
	}
	/* What the build put in the schema file; `schema:` may name another. */
	fprintf(out, "the build's schema file holds %s\n", XD_SCHEMA_ORIGIN);
}
