/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Borrowed byte ranges: a name (text) and a span (bytes). Neither owns
 * what it points to; each user says whose memory it is.
 */
#ifndef XD_UTIL_SPAN_H
#define XD_UTIL_SPAN_H

#include <stddef.h>
#include <stdint.h>

struct xd_name {
	const char *data;
	size_t len;
};

struct xd_span {
	const uint8_t *data;
	uint32_t len;
};

#endif
