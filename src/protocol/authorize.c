/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/authorize.h"

#include "util/text.h"

bool xd_authorize(const struct xd_authz_rule *rules, size_t n,
		  const char *identity, const char *node_id,
		  const char *node_cluster, size_t *rule)
{
	if (n == 0) {
		if (rule != NULL)
			*rule = 0;
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (xd_text_glob(rules[i].identity, identity) &&
		    xd_text_glob(rules[i].node_id, node_id) &&
		    xd_text_glob(rules[i].node_cluster, node_cluster)) {
			if (rule != NULL)
				*rule = i;
			return true;
		}
	}
	return false;
}
