/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fleet as xdsctl reaches it: the replicas the admin endpoint it
 * is pointed at lists (GET /fleet.json, admin/fleet.h), each asked in
 * turn at the admin address it registered, for `xdsctl fleet` and the
 * `--fleet` views of clients, status, diff and rollout status.
 *
 * The replica xdsctl is pointed at is asked at --admin as given; the
 * others at their registered address (admin_advertise in
 * xdsd.yaml(5)). A replica listed twice (the daemon lists a restarted
 * replica once already) is asked once.
 *
 * Ownership: xc_members owns its answers and names. Thread: single.
 */
#ifndef XD_XDSCTL_MEMBERS_H
#define XD_XDSCTL_MEMBERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "xdsctl/call.h"
#include "xdsctl/ctl.h"

/* Replicas asked at most (the daemon keeps 256 others' reports). */
#define XC_FLEET_MAX 257

struct xc_member {
	const char *name;  /* the replica's name (borrowed from the doc) */
	const char *admin; /* where it is asked: --admin for this one */
	bool self;
	json_t *reg;       /* its registration (borrowed from the doc) */
	struct xc_opts o;  /* the command's options, at its admin address */
	/* its answer to the fan-out's GET; `ok` when one came */
	struct xc_answer a;
	bool ok;
};

struct xc_members {
	struct xc_answer doc; /* /fleet.json */
	struct xc_member *m;
	size_t n;
};

/* GET /fleet.json of o->admin into `ms`: XC_OK, or the exit status
 * having said why (ms then holds nothing to free). */
int xc_members_get(const struct xc_opts *o, struct xc_members *ms);

/*
 * GET `path` of every member (a JSON object answering 200), into each
 * one's `a`, `ok` when it came; one that cannot be reached or refuses
 * is said on stderr, naming the replica. XC_OK when every one
 * answered, else the worst exit status (XC_UNREACHABLE first).
 */
int xc_members_ask(struct xc_members *ms, const char *path);

/* --json of a --fleet view: {"replicas": [{"replica": name, `what`:
 * its answer as it came, or null}]} on stdout. */
void xc_members_print_json(const struct xc_members *ms, const char *what);

void xc_members_free(struct xc_members *ms);

/* "name" with " (this one)" for the member asked first: a short label
 * (malloc'd, made safe). */
char *xc_member_label(const struct xc_member *m);

#endif
