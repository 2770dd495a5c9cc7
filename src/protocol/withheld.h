/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names a client asks for that its identity may not be served: the
 * snapshot holds the resource, but its "@allow" (xdsd-snapshot(5))
 * names no glob the stream's identity matches, so the stream's view
 * (derived.h) lacks it and the client is told it does not exist, as
 * for any missing name (rules S10, D8). Such a refusal must reach the
 * operator with who and why, once per stream and name: a SotW client
 * repeats its whole list on every request, so each subscription keeps
 * the names it was already refused (sub->withheld).
 *
 * Only names asked for one by one count: a wildcard asks for no name,
 * and what it is not shown is no refusal.
 *
 * Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_WITHHELD_H
#define XD_PROTOCOL_WITHHELD_H

#include <stddef.h>

#include "protocol/sub.h"
#include "snapshot/table.h"

/*
 * Calls fn(arg, name) for each name `sub` subscribes to by name whose
 * resource `full` (the type's table, before any view) holds restricted
 * and `view` (the stream's view of it) lacks, and that `sub` was not
 * refused before; remembers them. A name shown again (a reload gave it
 * to the identity) is forgotten, so that losing it once more is told.
 * Returns how many were new. `view` == `full`: nothing is withheld.
 */
size_t xd_withheld_tell(struct xd_sub *sub, struct xd_table *full,
			struct xd_table *view,
			void (*fn)(void *arg, struct xd_name name), void *arg);

#endif
