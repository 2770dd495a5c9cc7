/* SPDX-License-Identifier: Apache-2.0 */
#include "config/expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

char *xd_expand_path(const char *value, char *why, size_t len)
{
	static const char var[] = "${" XD_CREDENTIALS_VAR "}";
	struct xd_buf out = XD_BUF_INIT;
	const char *p = value, *at;

	while ((at = strstr(p, "${")) != NULL) {
		const char *dir = getenv(XD_CREDENTIALS_VAR);
		const char *close = strchr(at, '}');

		if (close == NULL) {
			snprintf(why, len, "'${' without its '}'");
			goto fail;
		}
		if (strncmp(at, var, sizeof(var) - 1) != 0) {
			snprintf(why, len,
				 "unknown variable '%.*s': only ${" XD_CREDENTIALS_VAR "} is expanded",
				 (int)(close - at + 1) > 64 ? 64 : (int)(close - at + 1), at);
			goto fail;
		}
		if (dir == NULL || dir[0] == '\0') {
			snprintf(why, len,
				 "${" XD_CREDENTIALS_VAR "} is not set: systemd sets it for a unit with "
				 "LoadCredential= (systemd.exec(5))");
			goto fail;
		}
		xd_buf_append(&out, p, (size_t)(at - p));
		xd_buf_append(&out, dir, strlen(dir));
		p = at + sizeof(var) - 1;
	}
	xd_buf_append(&out, p, strlen(p) + 1);
	return (char *)xd_buf_steal(&out, NULL);
fail:
	xd_buf_free(&out);
	return NULL;
}

const char *xd_expand_credential(const char *path)
{
	const char *dir = getenv(XD_CREDENTIALS_VAR);
	size_t n;

	if (dir == NULL || dir[0] == '\0')
		return NULL;
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n) != 0 || path[n] != '/' || path[n + 1] == '\0' ||
	    strchr(path + n + 1, '/') != NULL)
		return NULL;
	return path + n + 1;
}
