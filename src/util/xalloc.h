/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation that does not fail, and contracts that are checked: the two
 * halves of xdsd's one rule for what cannot go on.
 *
 *   Running out of memory: every allocation goes through xd_malloc and
 *   its family, which abort with a message naming the size. A daemon
 *   that cannot allocate a few hundred bytes has nothing sensible left
 *   to do; handling NULL at each of hundreds of call sites would only
 *   add paths that are never tested. (Limits on what peers and files
 *   may make xdsd allocate are enforced where the input is read, as
 *   errors of that input.)
 *
 *   Broken internal contracts (a programmer's error, never input):
 *   XD_ASSERT, kept in release builds, for checks that cost a compare;
 *   it logs the file, line and condition, then aborts.
 *
 *   Bad input (a client's request, a snapshot file, the configuration)
 *   is neither: functions that read it return -1 with a diagnostic, and
 *   the caller refuses the input.
 *
 * Thread: any.
 */
#ifndef XD_UTIL_XALLOC_H
#define XD_UTIL_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xd_malloc(size_t n);
void *xd_calloc(size_t n, size_t size);
void *xd_realloc(void *p, size_t n);
/* realloc of `n` elements of `size` bytes, the product checked. */
void *xd_reallocarray(void *p, size_t n, size_t size);
char *xd_strdup(const char *s);
/* At most `n` bytes of `s`, up to a NUL; `s` may be NULL when `n` is 0. */
char *xd_strndup(const char *s, size_t n);
char *xd_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xd_vasprintf(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

/*
 * Makes `p`, an array of `*cap` elements of `size` bytes, hold at least
 * `need` elements, doubling its capacity (16 at first); returns the
 * array.
 */
void *xd_grow(void *p, size_t *cap, size_t need, size_t size);

/* For allocators of other libraries: says so and aborts. */
void xd_out_of_memory(size_t n) __attribute__((noreturn));

/* Logs "FILE:LINE: internal error: WHAT" and aborts. */
void xd_panic(const char *file, int line, const char *what)
	__attribute__((noreturn));
/* The same, WHAT followed by a printf-style account of whom it concerns
 * ("stream 12, CDS"). */
void xd_panicf(const char *file, int line, const char *what,
	       const char *fmt, ...)
	__attribute__((noreturn, format(printf, 4, 5)));

#define XD_ASSERT(cond)                                             \
	do {                                                        \
		if (__builtin_expect(!(cond), 0))                   \
			xd_panic(__FILE__, __LINE__, "assertion '" #cond "' failed"); \
	} while (0)

/*
 * XD_ASSERT that names what it concerns, as "assertion 'refs > 0' failed
 * (stream 12, CDS)": the arguments after the condition are a printf
 * format and its values, evaluated only on failure.
 */
#define XD_ASSERT_INFO(cond, ...)                                   \
	do {                                                        \
		if (__builtin_expect(!(cond), 0))                   \
			xd_panicf(__FILE__, __LINE__,               \
				  "assertion '" #cond "' failed", __VA_ARGS__); \
	} while (0)

/* Drops one of the references counted in `refs` (an unsigned lvalue) and
 * says whether it was the last; dropping one that was never taken is a
 * programmer's error, caught here rather than as a use after free. */
#define XD_UNREF(refs)                                              \
	((refs) > 0 ? --(refs) == 0                                 \
		    : (xd_panic(__FILE__, __LINE__,                  \
				"reference dropped below zero: '" #refs "'"), \
		       0))

#endif
