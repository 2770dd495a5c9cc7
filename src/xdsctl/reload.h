/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reload record (what POST /reload answers, and what /status.json
 * lists under reloads.history) for people: a line, then the errors
 * with their file:line, indented, or what it changed.
 */
#ifndef XD_XDSCTL_RELOAD_H
#define XD_XDSCTL_RELOAD_H

#include <jansson.h>
#include <stdio.h>

/* `indent` goes before every line. */
void xc_reload_print(FILE *out, json_t *rec, const char *indent);

/* Under it, what the reload changed (its "diff", when it has one): a
 * line per snapshot, then the warnings. */
void xc_reload_print_diff(FILE *out, json_t *rec, const char *indent);

#endif
