/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdstp:// resource names (xDS TP1; docs/protocol.md rules X1 and X2).
 *
 *   xdstp://[authority]/<type>/<id>[?<context parameters>][#<directives>]
 *
 * Two such names are the same resource when they are equal part by
 * part, the context parameters compared as a set. xdsd therefore keeps
 * every xdstp name in one canonical form, the same one gRPC's xDS
 * client writes, so that equal names are equal strings and a table
 * lookup stays an exact match:
 *   - the scheme in lower case;
 *   - authority, path and each parameter's key and value
 *     percent-decoded, then written with every byte that may stand
 *     literally in that part (RFC 3986 pchar, plus '/' in the path and
 *     '/' '?' in parameters, but not '&' '=' there) as itself and every
 *     other as %XX with upper-case digits;
 *   - parameters as key=value, sorted (bytewise, on that form), joined
 *     by '&'; no '?' when there are none;
 *   - the fragment (processing directives: #alt=, #entry=) left out:
 *     it tells a client how to fetch, it is not part of the name.
 *
 * A glob collection (rule X2) is a name whose last path segment is "*":
 * "xdstp://a/T/some/path/" followed by "*?k=v" names every resource
 * "xdstp://a/T/some/path/<one segment>?k=v".
 *
 * Static functions of their input; thread: any.
 */
#ifndef XD_XDS_XDSTP_H
#define XD_XDS_XDSTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether `name` is in the xdstp scheme ("xdstp:", any case). */
bool xd_xdstp_is(const char *name, size_t len);

/* Where the parts of a canonical name lie (offsets into it). */
struct xd_xdstp_parts {
	size_t type, type_len;   /* the resource type: a message name */
	size_t id, id_len;       /* the path after the type, without '/' */
	size_t query;            /* offset of '?', or the name's length */
	bool fragment;           /* the input had one (left out) */
	bool glob;               /* the id's last segment is "*" */
};

/*
 * The canonical form of the xdstp name `name` (xd_xdstp_is true):
 * returns it (malloc'd, NUL-terminated, length in *out_len) and fills
 * *parts when not NULL; or NULL with a static reason in *why for a
 * name that is not a well-formed one (no "//", no type, no id, a bad
 * %-escape, a NUL byte).
 */
char *xd_xdstp_canon(const char *name, size_t len, size_t *out_len,
		     struct xd_xdstp_parts *parts, const char **why);

/*
 * The glob collection a canonical name belongs to: the name with the
 * last segment of its id replaced by "*" (parameters kept), written to
 * `buf` (room for len + 2 bytes, NUL-terminated); returns its length,
 * or 0 when `name` is not a canonical xdstp name or is a glob itself.
 */
size_t xd_xdstp_collection(const char *name, size_t len, char *buf);

/* Whether a canonical name is a glob collection (last segment "*"). */
bool xd_xdstp_is_glob(const char *name, size_t len);

/*
 * The proto3 form of an xdstp name: an xds.core.v3.ResourceLocator
 * (scheme XDSTP, authority, resource_type and id decoded, the context
 * parameters as exact_context), as list collections carry their
 * members (rule X3).
 *
 * xd_xdstp_to_locator appends the message's bytes for the xdstp name
 * `url` (any spelling) to `out`: fields in number order, the parameters
 * sorted by key, as protobuf's deterministic serializer writes them.
 * Returns 0, or -1 with a static reason in *why (not a well-formed
 * name, a '#' fragment of directives, a parameter given twice), and
 * `out` as it was.
 *
 * xd_xdstp_from_locator is the way back: the canonical name a
 * ResourceLocator stands for (malloc'd, length in *out_len, its parts
 * in *parts when not NULL), or NULL with a static reason in *why for a
 * message that is malformed, of another scheme, with directives, or
 * whose parts make no well-formed name.
 */
struct xd_buf;
int xd_xdstp_to_locator(const char *url, size_t len, struct xd_buf *out,
			const char **why);
char *xd_xdstp_from_locator(const uint8_t *msg, size_t len, size_t *out_len,
			    struct xd_xdstp_parts *parts, const char **why);

#endif
