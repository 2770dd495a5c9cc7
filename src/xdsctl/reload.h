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

#include "xdsctl/call.h"

/* POST `path` (/reload, with its query): XC_OK with the record in *a,
 * or the exit status, having said why. */
int xc_reload_post(const struct xc_opts *o, const char *path,
		   struct xc_answer *a);

/* `indent` goes before every line. */
void xc_reload_print(FILE *out, json_t *rec, const char *indent);

/* Under it, what the reload changed (its "diff", when it has one): a
 * line per snapshot with the resources the record names under it, a
 * type a line, then the warnings. */
void xc_reload_print_diff(FILE *out, json_t *rec, const char *indent);

/* A "warning: ..." line for each of a diff's "warnings". */
void xc_reload_print_warnings(FILE *out, json_t *diff, const char *indent);

#endif
