/*
 * Default locations of the configuration file, the snapshot directory
 * and the schema.
 *
 * A binary run from the build tree (src/xdsd beside the configure
 * output) uses the tree: etc/xdsd.yaml, snapshots/ and the freshly built
 * proto/xds-api.pb. An installed binary uses $(sysconfdir)/xdsd/xdsd.yaml,
 * $(sysconfdir)/xdsd/snapshots and $(pkgdatadir)/xds-api.pb. The choice
 * is made from /proc/self/exe, never from the working directory, so the
 * same command behaves the same wherever it is started.
 *
 * Strings are static; thread: any.
 */
#ifndef XD_CONFIG_PATHS_H
#define XD_CONFIG_PATHS_H

#include <stdbool.h>

struct xd_paths {
	const char *config;
	const char *snapshots;
	const char *schema;
	bool in_tree;
};

void xd_paths_defaults(struct xd_paths *out);

#endif
