/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet's helpers: dying on errors, allocation that dies when out of
 * memory, the monotonic clock and the hash its maps use. A benchmark
 * that cannot allocate or start a call has nothing sensible left to
 * measure, so errors end the process.
 *
 * No state; any thread.
 */
#ifndef BENCH_FLEET_UTIL_H
#define BENCH_FLEET_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);
void sleep_ms(int ms);

/* Prints "fleet: ..." on stderr and exits 1. */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Allocation that dies when out of memory; the caller owns the result. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
/* n bytes of s and a NUL. */
char *xstrndup(const void *s, size_t n);

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return mix64(h ^ n);
}

/* Whether the n bytes at p are the string s. */
static inline bool span_eq(const uint8_t *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

#endif
