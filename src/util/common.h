/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers every module may use. */
#ifndef XD_UTIL_COMMON_H
#define XD_UTIL_COMMON_H

#include <stddef.h>

/* For parameters a callback signature imposes but this one ignores. */
#define XD_UNUSED __attribute__((unused))

#define XD_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The struct that holds `ptr` as its member `member`. */
#define xd_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#endif
