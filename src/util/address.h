/*
 * Listening and connecting addresses as xdsd's configuration writes them:
 * host:port, [v6]:port or unix:/path. One checker for the *_listen
 * directives and for xdsctl's --admin, so both refuse the same things
 * with the same words. And the other way: a peer's socket address as
 * the text log lines and limits name it.
 *
 * Thread: any; pure.
 */
#ifndef XD_UTIL_ADDRESS_H
#define XD_UTIL_ADDRESS_H

#include <stddef.h>

/* What is wrong with `s`, or NULL when nothing is. Port 0 is accepted
 * (a listener takes any free port); a client must refuse it itself. */
const char *xd_address_error(const char *s);

struct sockaddr;

/* `sa` as "10.0.0.7:40112" or "[::1]:5000" (an IPv4-mapped IPv6
 * address as IPv4) into `out` (room for `cap` bytes). Returns AF_INET
 * or AF_INET6, the form written; 0 for another family (`out` is then
 * ""). */
int xd_address_format(const struct sockaddr *sa, char *out, size_t cap);

#endif
