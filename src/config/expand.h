/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Variables in the TLS file paths (tls.cert, tls.key, tls.client_ca).
 *
 * One only: ${CREDENTIALS_DIRECTORY}, where systemd puts the files a
 * unit passes with LoadCredential= (readable by the service's dynamic
 * user, whatever the original file's owner), so that xdsd.yaml can say
 * `key: ${CREDENTIALS_DIRECTORY}/tls.key`. It is taken from the
 * environment when the configuration is read; unset or empty, or any
 * other ${...}, is an error that says so. A `$` not followed by `{`
 * is itself.
 *
 * Thread: any; reads the environment.
 */
#ifndef XD_CONFIG_EXPAND_H
#define XD_CONFIG_EXPAND_H

#include <stddef.h>

#define XD_CREDENTIALS_VAR "CREDENTIALS_DIRECTORY"

/* `value` with its variables replaced (malloc'd), or NULL with the
 * reason in `why` (`len` bytes). */
char *xd_expand_path(const char *value, char *why, size_t len);

/*
 * The name of `path` in ${CREDENTIALS_DIRECTORY} ("tls.key" for
 * "$CREDENTIALS_DIRECTORY/tls.key"), or NULL when it is not directly in
 * it or the variable is not set: the file is then systemd's copy of a
 * credential, made when the service started and not made again on a
 * reload (systemd.exec(5), LoadCredential=). Points into `path`.
 */
const char *xd_expand_credential(const char *path);

#endif
