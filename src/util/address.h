/*
 * Listening and connecting addresses as xdsd's configuration writes them:
 * host:port, [v6]:port or unix:/path. One checker for the *_listen
 * directives and for xdsctl's --admin, so both refuse the same things
 * with the same words.
 *
 * Thread: any; pure.
 */
#ifndef XD_UTIL_ADDRESS_H
#define XD_UTIL_ADDRESS_H

/* What is wrong with `s`, or NULL when nothing is. Port 0 is accepted
 * (a listener takes any free port); a client must refuse it itself. */
const char *xd_address_error(const char *s);

#endif
