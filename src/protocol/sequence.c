/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/sequence.h"

#include <string.h>

#include "protocol/derived.h"

/* Settled: the client is in step with the target for this type. */
static bool settled(const struct xd_sub *subs, struct xd_snapshot *target,
		    enum xd_rtype t)
{
	const struct xd_sub *s = &subs[t];

	return s->state == XD_SUB_IDLE ||
	       (s->state == XD_SUB_HOLDING &&
		xd_sub_held(s) == xd_snapshot_table(target, t));
}

static enum xd_rtype_role role(enum xd_rtype t)
{
	return xd_rtype_info(t)->role;
}

/* The types that use kept resources (listeners, routes...) still in
 * transition to the target. */
static bool breaking_pending(const struct xd_sub *subs,
			     struct xd_snapshot *target)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (role((enum xd_rtype)t) == XD_ROLE_USER &&
		    !settled(subs, target, (enum xd_rtype)t))
			return true;
	return false;
}

/* Does type `u`'s reference rules name type `k`? */
static bool refers_to(enum xd_rtype u, enum xd_rtype k)
{
	const struct xd_rtype_info *info = xd_rtype_info(u);

	for (size_t r = 0; r < info->nrefs; r++)
		if (info->refs[r].to == k)
			return true;
	return false;
}

/*
 * What the resources of type `t` that the client holds need of KEPT
 * type `k` (its clusters), as `kept_table` has them; NULL when `t` is
 * no USER type that refers to `k`, or the client holds nothing of it.
 * Borrowed until the next xd_derived_refs.
 */
static struct xd_nameset *used_of(const struct xd_sub *subs,
				  struct xd_table *kept_table, enum xd_rtype t,
				  enum xd_rtype k)
{
	const struct xd_sub *u = &subs[t];

	if (role(t) != XD_ROLE_USER || !refers_to(t, k) ||
	    u->state == XD_SUB_IDLE || xd_sub_held(u) == NULL)
		return NULL;
	return xd_derived_refs(kept_table, xd_sub_held(u), u->ledger->names.all,
			       u->ledger->names.set);
}

/*
 * Has the client subscribed to the resources of KEPT types (clusters)
 * that the USER types it holds (route configurations, virtual hosts)
 * refer to? A client that names its clusters (gRPC) subscribes to a new
 * route's cluster only once it has the route, and goes on using the old
 * cluster until the new one comes: removing the old one before (a SotW
 * response for the names it asked before) leaves its route with
 * neither. A wildcard subscription (Envoy's) covers them all.
 */
static bool kept_covered(const struct xd_sub *subs, struct xd_snapshot *target)
{
	for (int k = 0; k < XD_RTYPE_COUNT; k++) {
		const struct xd_sub *kept = &subs[k];
		struct xd_table *kept_table;

		if (role((enum xd_rtype)k) != XD_ROLE_KEPT)
			continue;
		kept_table = xd_snapshot_table(target, (enum xd_rtype)k);
		for (int t = 0; t < XD_RTYPE_COUNT; t++) {
			struct xd_nameset *need = used_of(subs, kept_table,
							  (enum xd_rtype)t,
							  (enum xd_rtype)k);

			if (need != NULL && xd_nameset_count(need) != 0 &&
			    !xd_derived_covered(kept_table, need, kept->want.all,
						kept->want.set))
				return false;
		}
	}
	return true;
}

/* Does the client name the resources of some KEPT type (clusters)? A
 * wildcard subscription (Envoy's) has every cluster as soon as it is
 * sent. */
static bool kept_named(const struct xd_sub *subs)
{
	for (int k = 0; k < XD_RTYPE_COUNT; k++)
		if (role((enum xd_rtype)k) == XD_ROLE_KEPT &&
		    xd_sub_active(&subs[k]) && !subs[k].want.all)
			return true;
	return false;
}

/*
 * Does the client hold (has it ACKed: its running ledger) the resources
 * of KEPT types (clusters) that the USER types it holds refer to, as
 * the target has them, and those of the WARMS types (endpoints) that
 * these refer to? A client that names its clusters (gRPC) goes on using
 * the old cluster until the new one and its endpoints came; told before
 * that the old one is gone, it fails the calls bound to it (grpc-java
 * did: "Resource ... does not exist").
 */
static bool kept_held(const struct xd_sub *subs, struct xd_snapshot *target)
{
	for (int k = 0; k < XD_RTYPE_COUNT; k++) {
		const struct xd_sub *kept = &subs[k];
		struct xd_table *kept_table;

		if (role((enum xd_rtype)k) != XD_ROLE_KEPT || kept->want.all)
			continue;
		kept_table = xd_snapshot_table(target, (enum xd_rtype)k);
		for (int t = 0; t < XD_RTYPE_COUNT; t++) {
			struct xd_nameset *need = used_of(subs, kept_table,
							  (enum xd_rtype)t,
							  (enum xd_rtype)k);
			bool held;

			if (need == NULL)
				continue;
			/* kept past the next xd_derived_refs, the endpoints' */
			need = xd_nameset_ref(need);
			held = xd_derived_held(kept_table, need, kept->running);
			for (int w = 0; held && w < XD_RTYPE_COUNT; w++) {
				struct xd_table *w_table;
				struct xd_nameset *w_need;

				if (role((enum xd_rtype)w) != XD_ROLE_WARMS ||
				    xd_rtype_info((enum xd_rtype)w)->warms != (enum xd_rtype)k)
					continue;
				w_table = xd_snapshot_table(target, (enum xd_rtype)w);
				w_need = xd_derived_refs(w_table, kept_table, false, need);
				held = xd_derived_held(w_table, w_need, subs[w].running);
			}
			xd_nameset_unref(need);
			if (!held)
				return false;
		}
	}
	return true;
}

/*
 * Do the dropped resources of `t` still wait for a client that names
 * its clusters to take up the new ones (kept_held)? True while waiting.
 * The deadline is set when the wait starts, which is when the client
 * asked for what its routes need (kept_covered), and cleared once it
 * holds it; past it, the old ones go.
 */
static bool uptake_waiting(const struct xd_sub *subs, struct xd_snapshot *target,
			   uint64_t now, struct xd_seq_wait *wait,
			   enum xd_seq_waited *waited)
{
	if (kept_held(subs, target)) {
		wait->state = XD_WAIT_NONE;
		*waited = XD_WAITED_OVER;
		return false;
	}
	if (wait->state == XD_WAIT_NONE) {
		wait->state = XD_WAIT_RUNNING;
		wait->until = now + XD_SEQ_WAIT_MS;
	}
	if (wait->state == XD_WAIT_RUNNING && now < wait->until) {
		*waited = XD_WAITED_WAITING;
		return true;
	}
	wait->state = XD_WAIT_OVERDUE;
	*waited = XD_WAITED_LATE;
	return false;
}

/*
 * Whether a type after `t` in push order that uses kept resources (a
 * USER type: scoped routes, virtual hosts after route configurations)
 * is still in transition to the target.
 */
static bool later_users_pending(const struct xd_sub *subs,
				struct xd_snapshot *target, enum xd_rtype t)
{
	for (int u = (int)t + 1; u < XD_RTYPE_COUNT; u++)
		if (role((enum xd_rtype)u) == XD_ROLE_USER &&
		    !settled(subs, target, (enum xd_rtype)u))
			return true;
	return false;
}

/*
 * Whether what the client holds of `t` and the target dropped stays:
 * KEPT resources (clusters) and, in delta, those of the types that warm
 * them (endpoints) while the USER types that used them (listeners and
 * routes) change, and until the client subscribed to those its USER
 * types now use; for a client that names its clusters, until it holds
 * them too (uptake_waiting); in delta, a `kept_in_delta` type's (route
 * configurations) while the USER types after it (scoped routes,
 * virtual hosts) change. `*u` is union(target, held), made here when
 * needed (NULL: not yet), for the caller to serve or release.
 */
static bool keeps(struct xd_sub *subs, struct xd_snapshot *target,
		  const struct xd_seq_mode *mode, enum xd_rtype t, uint64_t now,
		  struct xd_seq_waits *waits, struct xd_seq_step *out,
		  struct xd_table **u)
{
	struct xd_table *table = xd_snapshot_table(target, t);

	if (role(t) == XD_ROLE_KEPT || (role(t) == XD_ROLE_WARMS && mode->delta)) {
		if (breaking_pending(subs, target) || !kept_covered(subs, target)) {
			/* the uptake wait starts once the client asked */
			if (waits->uptake.state != XD_WAIT_NONE) {
				waits->uptake.state = XD_WAIT_NONE;
				out->uptake = XD_WAITED_OVER;
			}
			return true;
		}
		if (!kept_named(subs))
			return false;
		/* nothing of `t` dropped: nothing to wait for on its account */
		*u = xd_derived_union(table, xd_sub_held(&subs[t]));
		return xd_table_count(*u) > xd_table_count(table) &&
		       uptake_waiting(subs, target, now, &waits->uptake,
				      &out->uptake);
	}
	return mode->delta && xd_rtype_info(t)->kept_in_delta &&
	       later_users_pending(subs, target, t);
}

/*
 * The table to serve for a type: the target's, except that on the
 * aggregated methods what keeps() says stays, the union of the target's
 * and the one the client holds. Returns a new reference.
 */
static struct xd_table *effective(struct xd_sub *subs,
				  struct xd_snapshot *target,
				  const struct xd_seq_mode *mode,
				  enum xd_rtype t, uint64_t now,
				  struct xd_seq_waits *waits,
				  struct xd_seq_step *out)
{
	struct xd_table *table = xd_snapshot_table(target, t);
	struct xd_sub *s = &subs[t];
	struct xd_table *u = NULL;

	if (!mode->aggregated || xd_sub_held(s) == NULL ||
	    xd_sub_held(s) == table)
		return xd_table_ref(table);
	if (!keeps(subs, target, mode, t, now, waits, out, &u)) {
		if (u != NULL)
			xd_table_unref(u);
		return xd_table_ref(table);
	}
	return u != NULL ? u : xd_derived_union(table, xd_sub_held(s));
}

/*
 * Does the first USER type (listeners) wait for the client to subscribe
 * to the resources of type `warming` (endpoints) that those it holds of
 * the type warmed (clusters) need? True while waiting. The deadline is
 * set when the wait starts and cleared once covered; past it, the
 * session goes on (and does not wait again until a coverage ends the
 * episode).
 */
static bool endpoints_waiting(struct xd_sub *subs, struct xd_snapshot *target,
			      enum xd_rtype warming, uint64_t now,
			      struct xd_seq_wait *wait, enum xd_seq_waited *eds)
{
	struct xd_sub *cds = &subs[xd_rtype_info(warming)->warms];
	struct xd_sub *ep = &subs[warming];
	struct xd_table *eds_table = xd_snapshot_table(target, warming);
	struct xd_nameset *need;

	if (cds->state == XD_SUB_IDLE || xd_sub_held(cds) == NULL)
		return false;
	need = xd_derived_refs(eds_table, xd_sub_held(cds), cds->ledger->names.all,
			       cds->ledger->names.set);
	if (xd_nameset_count(need) == 0 ||
	    (xd_sub_active(ep) &&
	     xd_derived_covered(eds_table, need, ep->want.all, ep->want.set))) {
		wait->state = XD_WAIT_NONE;
		*eds = XD_WAITED_OVER;
		return false;
	}
	if (wait->state == XD_WAIT_NONE) {
		wait->state = XD_WAIT_RUNNING;
		wait->until = now + XD_SEQ_WAIT_MS;
	}
	if (wait->state == XD_WAIT_RUNNING && now < wait->until) {
		*eds = XD_WAITED_WAITING;
		return true;
	}
	wait->state = XD_WAIT_OVERDUE;
	*eds = XD_WAITED_LATE;
	return false;
}

/* Type `t`'s response, if one is due. True (and `out` filled) if so. */
static bool due(struct xd_sub *subs, struct xd_snapshot *target,
		const struct xd_seq_mode *mode, enum xd_rtype t, uint64_t now,
		struct xd_seq_waits *waits, struct xd_seq_step *out)
{
	struct xd_table *table = effective(subs, target, mode, t, now, waits,
					   out);
	struct xd_body *b = xd_sub_next(&subs[t], table, mode->form,
					xd_rtype_info(t)->full_state &&
						!mode->delta);

	if (b == NULL) {
		xd_table_unref(table);
		return false;
	}
	out->action = XD_SEQ_SEND;
	out->type = t;
	out->table = table;
	out->body = b;
	return true;
}

/*
 * May `t` go while `in_flight`, an earlier type, awaits its answer?
 * A type that warms it may (endpoints while clusters do): a client
 * warms the clusters it was just sent until their endpoints come, and
 * Envoy, once initialized, holds its CDS ACK until every warming
 * cluster is warm; the server is to send the endpoints meanwhile (the
 * specification's "resource warming"). Any other type waits.
 */
static bool warms(enum xd_rtype in_flight, enum xd_rtype t)
{
	return role(t) == XD_ROLE_WARMS && xd_rtype_info(t)->warms == in_flight;
}

/*
 * One pass over the types in the order of rule A2. True when it decided
 * (a send, a type in flight, the EDS wait); false when nothing is due.
 */
static bool pass(struct xd_sub subs[XD_RTYPE_COUNT], struct xd_snapshot *target,
		 const struct xd_seq_mode *mode, uint64_t now,
		 struct xd_seq_waits *waits, struct xd_seq_step *out)
{
	/* the first type in flight; later types wait for its answer, but
	 * for the one it warms */
	int in_flight = -1;
	/* the type that warms, whose wait comes before the first USER type */
	int warming = -1;
	bool users = false;

	for (int i = 0; i < XD_RTYPE_COUNT; i++) {
		enum xd_rtype t = (enum xd_rtype)i;

		if (in_flight >= 0 && !warms((enum xd_rtype)in_flight, t))
			break;
		/* the first: endpoints, whose names the clusters give
		 * (locality endpoints come by the endpoints' globs) */
		if (role(t) == XD_ROLE_WARMS && warming < 0)
			warming = i;
		if (role(t) == XD_ROLE_USER && !users) {
			users = true;
			if (warming >= 0 &&
			    endpoints_waiting(subs, target, (enum xd_rtype)warming,
					      now, &waits->eds, &out->eds)) {
				out->action = XD_SEQ_WAIT_EDS;
				return true;
			}
		}
		if (subs[t].state == XD_SUB_IDLE)
			continue;
		if (subs[t].state == XD_SUB_IN_FLIGHT) {
			if (in_flight < 0)
				in_flight = i;
			continue;
		}
		if (due(subs, target, mode, t, now, waits, out))
			return true;
	}
	if (in_flight < 0)
		return false;
	out->action = XD_SEQ_INFLIGHT;
	out->type = (enum xd_rtype)in_flight;
	return true;
}

void xd_seq_next(struct xd_sub subs[XD_RTYPE_COUNT],
		 struct xd_snapshot *target, const struct xd_seq_mode *mode,
		 uint64_t now, struct xd_seq_waits *waits,
		 struct xd_seq_step *out)
{
	memset(out, 0, sizeof(*out));
	out->action = XD_SEQ_IDLE;
	out->eds = XD_WAITED_UNTOUCHED;
	out->uptake = XD_WAITED_UNTOUCHED;
	if (!mode->aggregated) {
		struct xd_sub *s = &subs[mode->type];

		if (s->state == XD_SUB_IDLE)
			return;
		if (s->state == XD_SUB_IN_FLIGHT) {
			out->action = XD_SEQ_INFLIGHT;
			out->type = mode->type;
			return;
		}
		due(subs, target, mode, mode->type, now, waits, out);
		return;
	}
	/*
	 * A pass takes the types with nothing to send to hold their tables.
	 * When that settles the listeners and routes, it ends the hold on
	 * the clusters (and delta endpoints) they used, which this same
	 * pass served earlier from the union: the final clusters are due
	 * now, and nothing else may be coming to pump the stream again. So
	 * a pass that settled anything is followed by another. The tables
	 * served do not change after the second pass (nothing unsettles the
	 * listeners within a call), so a third finds nothing to settle.
	 * Tables are compared by id, never by address.
	 */
	for (;;) {
		uint64_t before[XD_RTYPE_COUNT];
		bool settled_some = false;

		for (int t = 0; t < XD_RTYPE_COUNT; t++)
			before[t] = xd_sub_held(&subs[t]) ? xd_table_id(xd_sub_held(&subs[t])) : 0;
		if (pass(subs, target, mode, now, waits, out))
			break;
		for (int t = 0; t < XD_RTYPE_COUNT; t++)
			settled_some |= before[t] !=
					(xd_sub_held(&subs[t]) ? xd_table_id(xd_sub_held(&subs[t])) : 0);
		if (!settled_some)
			break;
	}
	/*
	 * An uptake wait not looked at (its clusters in flight, or nothing
	 * kept any more) whose deadline passed is over: the session's timer
	 * must not pump the stream again for it. Once looked at again, the
	 * old clusters go at once.
	 */
	if (out->uptake == XD_WAITED_UNTOUCHED &&
	    waits->uptake.state == XD_WAIT_RUNNING && now >= waits->uptake.until) {
		waits->uptake.state = XD_WAIT_OVERDUE;
		out->uptake = XD_WAITED_LATE;
	}
}

void xd_seq_step_clear(struct xd_seq_step *st)
{
	xd_body_unref(st->body);
	xd_table_unref(st->table);
	st->body = NULL;
	st->table = NULL;
}
