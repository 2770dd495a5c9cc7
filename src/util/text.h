/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small helpers over names, shared by the configuration, the schema and
 * the protocol so that each exists once: the edit distance behind "did
 * you mean", the hash of the open-addressing name tables, a copy of text
 * into an arena, the identity globs, UTF-8 well-formedness and the
 * replacement of what is not well-formed, and the
 * short forms of ages and sizes that the status page and xdsctl show.
 *
 * Thread: any; pure functions, or over caller-owned memory.
 */
#ifndef XD_UTIL_TEXT_H
#define XD_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

/* How xd_text_distance compares. */
#define XD_TEXT_FOLD_CASE 0x1u /* ASCII letters match either case */
#define XD_TEXT_SWAPS 0x2u     /* a swap of neighbours is one edit */

/*
 * The number of single-byte insertions, deletions and substitutions
 * (and swaps, with XD_TEXT_SWAPS) that turn `a` into `b`. Names longer
 * than 64 bytes are never close: SIZE_MAX.
 */
size_t xd_text_distance(const char *a, size_t la, const char *b, size_t lb,
			unsigned flags);

/* FNV-1a of `len` bytes. Inline: name tables hash every key they look
 * up. */
static inline uint32_t xd_text_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* `len` bytes of `s` and a NUL, in the arena (which owns the copy). */
char *xd_text_copy(struct xd_arena *a, const char *s, size_t len);

/*
 * Whether `s` matches the glob `glob`: fnmatch(3) without flags, so `*`
 * matches `/` too (an identity glob ending in "/sa/" and a star covers
 * every service account of a namespace). One rule for every identity
 * glob: `authorize:` rules and snapshots' "@allow" lists.
 */
bool xd_text_glob(const char *glob, const char *s);

/*
 * The length of the well-formed UTF-8 sequence at `s` (at most `n`
 * bytes), or 0 when it is not one (overlong forms and surrogates
 * included): how the JSON and HTML writers tell text a client sent from
 * bytes they must replace.
 */
size_t xd_text_utf8_len(const uint8_t *s, size_t n);

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define XD_TEXT_REPLACEMENT "\xef\xbf\xbd"

struct xd_buf;

/*
 * Appends to `out` the well-formed UTF-8 sequence at `s` (at most `n`
 * bytes, n > 0) or, when there is none, `replacement` for its first
 * byte; returns how many bytes of `s` that took (at least 1). The one
 * rule by which the JSON, HTML and protobuf writers keep text a client
 * sent and replace each byte that is not UTF-8: they call it for what
 * they do not escape themselves, with XD_TEXT_REPLACEMENT or their own
 * spelling of U+FFFD ("\\ufffd" in JSON).
 */
size_t xd_text_utf8_put(struct xd_buf *out, const uint8_t *s, size_t n,
			const char *replacement);

/* An age for people: "7s", "5m 6s", "2h 3m", "3d 4h" (negative: 0s). */
void xd_text_age(char *out, size_t cap, long long seconds);

/* A duration as xdsd.yaml writes it ("1.5s", "250ms", "2m", "1h", or
 * "0") into *ms: NULL, or why it is not one. Also how the admin
 * endpoint and xdsctl read ages, so that all read them alike. */
const char *xd_text_duration(const char *s, uint64_t *ms);

/* "s" unless `n` is 1: "3 keys", "1 key". */
const char *xd_plural(long long n);

/* A size for people: "512 B", "1.2 KiB", "3.4 MiB", up to TiB. */
void xd_text_bytes(char *out, size_t cap, double bytes);

#endif
