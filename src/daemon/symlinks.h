/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symlinks on the way to a path. Resolving it component by
 * component, as the kernel does, each symlink followed is reported with
 * the directory that holds it (absolute, itself free of symlinks) and
 * its name: for a Kubernetes ConfigMap volume's `default.yaml ->
 * ..data/default.yaml`, the link default.yaml and the link ..data, both
 * in the volume's directory; for `current -> releases/v41`, current.
 * Replacing any of them changes what the path leads to, so the
 * snapshot watch watches the directories that hold them.
 *
 * At most XD_SYMLINKS_MAX_HOPS links are followed (as the kernel's
 * limit of 40), and paths are bounded by PATH_MAX.
 *
 * Thread: any (reads the file system only; getcwd for a relative path).
 */
#ifndef XD_DAEMON_SYMLINKS_H
#define XD_DAEMON_SYMLINKS_H

#define XD_SYMLINKS_MAX_HOPS 40

/* `dir` is absolute ("/" for the root); both are valid during the call. */
typedef void (*xd_symlink_fn)(void *arg, const char *dir, const char *name);

/*
 * Calls `fn` for each symlink met resolving `path`, in order. Returns 0
 * when the path leads to something, or -1 when it does not (a missing
 * component, a loop, a path too long); the links met up to there are
 * reported either way, as a dangling link may be re-pointed later.
 */
int xd_symlinks_walk(const char *path, xd_symlink_fn fn, void *arg);

#endif
