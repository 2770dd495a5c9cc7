/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/symlinks.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* `done` is the part resolved so far: absolute, free of symlinks, ""
 * for the root. `rest` is what is left, owned; each link met puts its
 * target in front of it. */
int xd_symlinks_walk(const char *path, xd_symlink_fn fn, void *arg)
{
	char done[PATH_MAX] = "", target[PATH_MAX];
	char *rest = xd_strdup(path), *p = rest;
	int hops = 0, rc = 0;

	if (path[0] != '/') {
		if (getcwd(done, sizeof(done)) == NULL) {
			free(rest);
			return -1;
		}
		if (strcmp(done, "/") == 0)
			done[0] = '\0';
	}
	while (*p != '\0') {
		char name[NAME_MAX + 1], cand[PATH_MAX], *next;
		size_t len, dlen = strlen(done);
		struct stat st;
		ssize_t n;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len > NAME_MAX) {
			rc = -1;
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			/* `done` holds no links: its parent is lexical */
			char *slash = strrchr(done, '/');

			if (slash != NULL)
				*slash = '\0';
			continue;
		}
		if (dlen + 1 + len >= sizeof(cand)) {
			rc = -1;
			break;
		}
		memcpy(cand, done, dlen);
		cand[dlen] = '/';
		memcpy(cand + dlen + 1, name, len + 1);
		if (lstat(cand, &st) != 0) {
			rc = -1;
			break;
		}
		if (!S_ISLNK(st.st_mode)) {
			memcpy(done, cand, dlen + 1 + len + 1);
			continue;
		}
		fn(arg, dlen > 0 ? done : "/", name);
		n = readlink(cand, target, sizeof(target) - 1);
		if (++hops > XD_SYMLINKS_MAX_HOPS || n <= 0) {
			rc = -1;
			break;
		}
		target[n] = '\0';
		if (target[0] == '/')
			done[0] = '\0';
		next = xd_asprintf("%s/%s", target, p);
		free(rest);
		rest = p = next;
	}
	free(rest);
	return rc;
}
