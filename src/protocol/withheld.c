/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/withheld.h"

#include <stdlib.h>

#include "protocol/ledger.h"
#include "protocol/nameset.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* The resource `key` finds in `full` that `view` does not show: by its
 * name, an alias or a locator (ledger.h), as the subscription finds it. */
static bool withheld(struct xd_table *full, struct xd_table *view,
		     const struct xd_key *key)
{
	const struct xd_entry *e = xd_ledger_lookup(full, key);

	return e != NULL && e->restricted &&
	       xd_ledger_lookup(view, key) == NULL;
}

size_t xd_withheld_tell(struct xd_sub *sub, struct xd_table *full,
			struct xd_table *view,
			void (*fn)(void *arg, struct xd_name name), void *arg)
{
	struct xd_nameset *want = sub->want.set;
	struct xd_name *now = NULL, *fresh = NULL;
	size_t nnow = 0, nfresh = 0, cap = 0, cap_fresh = 0;
	struct xd_nameset *set;

	XD_ASSERT_LOOP();
	if (full == NULL || view == NULL || want == NULL ||
	    (view == full && sub->withheld == NULL))
		return 0;
	for (size_t i = 0; view != full && i < xd_nameset_count(want); i++) {
		struct xd_name k = xd_nameset_at(want, i);

		if (!withheld(full, view, xd_nameset_key(want, i)))
			continue;
		now = xd_grow(now, &cap, nnow + 1, sizeof(*now));
		now[nnow++] = k;
		if (sub->withheld != NULL &&
		    xd_nameset_has(sub->withheld, k.data, k.len))
			continue;
		fresh = xd_grow(fresh, &cap_fresh, nfresh + 1, sizeof(*fresh));
		fresh[nfresh++] = k;
	}
	for (size_t i = 0; i < nfresh; i++)
		fn(arg, fresh[i]);
	/* what is withheld now: names unsubscribed or shown again leave */
	set = nnow > 0 ? xd_nameset_intern(now, nnow) : NULL;
	xd_nameset_unref(sub->withheld);
	sub->withheld = set;
	free(now);
	free(fresh);
	return nfresh;
}
