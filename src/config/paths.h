/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Default locations of the configuration file, the snapshot directory
 * and the schema.
 *
 * A binary run from the build tree (src/xdsd or src/xdsctl/xdsctl beside
 * the configure output) uses the tree: etc/xdsd.yaml, snapshots/ and the freshly built
 * proto/xds-api.pb. An installed binary uses $(sysconfdir)/xdsd/xdsd.yaml,
 * $(sysconfdir)/xdsd/snapshots and $(pkgdatadir)/xds-api.pb. The choice
 * is made from /proc/self/exe, never from the working directory, so the
 * same command behaves the same wherever it is started.
 *
 * The directories come from config/paths_gen.h, which the build writes
 * from configure's choices (Makefile.am): only this file includes it, so
 * a new prefix rebuilds this object and nothing else.
 *
 * Strings are static; thread: any.
 */
#ifndef XD_CONFIG_PATHS_H
#define XD_CONFIG_PATHS_H

#include <stdbool.h>
#include <stdio.h>

struct xd_paths {
	const char *config;
	const char *snapshots;
	const char *schema;
	bool in_tree;
};

/*
 * The directory systemd made for the service's state (StateDirectory=,
 * passed as $STATE_DIRECTORY; the first of several), malloc'd, or NULL
 * when there is none: state_dir's default (xdsd.yaml(5)), so that the
 * shipped unit keeps a last good state and a run by hand does not.
 */
char *xd_paths_state_dir(void);

/* The directory the shipped unit's StateDirectory=xdsd makes (systemd
 * puts a system service's state directories under /var/lib) and hands
 * xdsd as $STATE_DIRECTORY: what `xdsd --check`, run by hand without
 * it, says the service would use. Keep in step with
 * systemd/xdsd.service.in. */
#define XD_PATHS_UNIT_STATE_DIR "/var/lib/xdsd"

/* The defaults this binary uses: the build tree's or the installed. */
void xd_paths_defaults(struct xd_paths *out);

/* The installed defaults, wherever the binary runs from. */
void xd_paths_installed(struct xd_paths *out);

/*
 * For --version: the installed defaults compiled in, and, for a binary
 * run from its build tree, the tree's it uses instead; then which Envoy
 * API the schema file the build made holds.
 */
void xd_paths_print(FILE *out);

#endif
