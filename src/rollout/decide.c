/* SPDX-License-Identifier: Apache-2.0 */
#include "rollout/decide.h"

#include <stdio.h>
#include <string.h>

#include "util/common.h"
#include "util/log.h"

/* "'a', 'b' (and 3 more)" of `names` (n of them, `total` in all). */
static void names_text(char *const *names, size_t n, size_t total, char *out,
		       size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s'%.*s'",
					 i > 0 ? ", " : "",
					 XD_LOG_CLIP(strlen(names[i])), names[i]);
	if (total > n && used < len)
		snprintf(out + used, len - used, " (and %zu more)", total - n);
}

size_t xd_rollout_unproven(enum xd_require_canary require,
			   const struct xd_rollout_report *fleet, char *out,
			   size_t len)
{
	const char *names[XD_ROLLOUT_NAMES_MAX];
	size_t n = 0, total = 0;

	out[0] = '\0';
	if (require == XD_REQUIRE_NONE || fleet->nkeys == 0)
		return 0;
	if (require == XD_REQUIRE_ANY) {
		for (size_t i = 0; i < fleet->nkeys; i++)
			if (fleet->keys[i].proven)
				return 0;
	}
	for (size_t i = 0; i < fleet->nkeys; i++) {
		if (fleet->keys[i].proven)
			continue;
		if (n < XD_ROLLOUT_NAMES_MAX)
			names[n++] = fleet->keys[i].key;
		total++;
	}
	names_text((char *const *)names, n, total, out, len);
	return total;
}

/* The NACK that failed it: the one past max_nacks, the (max_nacks +
 * 1)th in time, when it is among those kept (the fleet's first,
 * record.h: xd_rollout_report_merge keeps the earliest), whatever
 * their order in the list; NULL when it is not. */
static const struct xd_rollout_nack *failing_nack(const struct xd_rollout_report *f,
						  uint64_t max_nacks)
{
	for (size_t i = 0; i < f->nnack_list; i++) {
		uint64_t before = 0;

		for (size_t j = 0; j < f->nnack_list; j++)
			before += f->nack_list[j].at_ms < f->nack_list[i].at_ms ||
				  (f->nack_list[j].at_ms == f->nack_list[i].at_ms && j < i);
		if (before == max_nacks)
			return &f->nack_list[i];
	}
	return NULL;
}

/* Not proven in time: why, with what is missing. */
static enum xd_rollout_decision too_late(const struct xd_config *cfg,
					 const struct xd_rollout_report *f,
					 const char *unproven, size_t nunproven,
					 char *why, size_t len)
{
	char waiting[1024];

	names_text(f->waiting, f->nwaiting, f->waiting_total, waiting,
		   sizeof(waiting));
	snprintf(why, len, "not proven within the timeout of %llu ms: %s%s%s%s%s",
		 (unsigned long long)cfg->rollout.timeout_ms,
		 nunproven > 0 ? "no canary ACKed snapshot " : "",
		 nunproven > 0 ? unproven : "",
		 nunproven > 0 && f->waiting_total > 0 ? "; " : "",
		 f->waiting_total > 0 ? "canaries that did not answer: " : "",
		 f->waiting_total > 0 ? waiting : "");
	return XD_DECIDE_FAIL;
}

enum xd_rollout_decision xd_rollout_decide(const struct xd_config *cfg,
					   const struct xd_rollout_record *rec,
					   const struct xd_rollout_report *f,
					   int64_t now_ms, char *why, size_t len)
{
	char unproven[1024];
	size_t nunproven;
	const struct xd_rollout_nack *n;

	why[0] = '\0';
	if (!xd_rollout_state_active(rec->state))
		return XD_DECIDE_WAIT;
	if (f->nacks > cfg->rollout.max_nacks) {
		n = failing_nack(f, cfg->rollout.max_nacks);
		snprintf(why, len,
			 "%llu NACK%s from canaries, more than max_nacks %llu%s%.*s%s%s%s%s%s%.*s",
			 (unsigned long long)f->nacks, f->nacks == 1 ? "" : "s",
			 (unsigned long long)cfg->rollout.max_nacks,
			 n != NULL ? "; the NACK past it from node '" : "",
			 n != NULL ? XD_LOG_CLIP(strlen(n->node_id)) : 0,
			 n != NULL ? n->node_id : "", n != NULL ? "' of " : "",
			 n != NULL ? n->type : "", n != NULL ? " version " : "",
			 n != NULL ? n->version : "", n != NULL ? ": " : "",
			 n != NULL ? XD_LOG_CLIP(strlen(n->message)) : 0,
			 n != NULL ? n->message : "");
		return XD_DECIDE_FAIL;
	}
	if (f->stuck_total > 0 &&
	    cfg->rollout.on_canary_timeout == XD_CANARY_TIMEOUT_FAIL) {
		snprintf(why, len,
			 "canary node '%.*s' did not answer within canary_timeout of %llu ms (%zu of %zu connected canaries answered)",
			 f->nstuck > 0 ? XD_LOG_CLIP(strlen(f->stuck[0])) : 1,
			 f->nstuck > 0 ? f->stuck[0] : "?",
			 (unsigned long long)cfg->rollout.canary_timeout_ms,
			 f->answered, f->canaries);
		return XD_DECIDE_FAIL;
	}
	nunproven = xd_rollout_unproven(cfg->rollout.require_canary, f, unproven,
					sizeof(unproven));
	if (nunproven > 0 || f->waiting_total > 0) {
		if (cfg->rollout.timeout_ms > 0 && rec->started_ms > 0 &&
		    now_ms - rec->started_ms >= (int64_t)cfg->rollout.timeout_ms)
			return too_late(cfg, f, unproven, nunproven, why, len);
		return XD_DECIDE_WAIT;
	}
	if (rec->state == XD_ROLLOUT_CANARY) {
		if (f->canaries == 0)
			snprintf(why, len, "no canary is connected (require_canary: %s)",
				 cfg->rollout.require_canary == XD_REQUIRE_NONE ?
					 "none" : "any or per_key, and no change to prove");
		else
			snprintf(why, len, "every canary answered (%zu, %llu NACK%s)",
				 f->canaries, (unsigned long long)f->nacks,
				 f->nacks == 1 ? "" : "s");
		return XD_DECIDE_BAKE;
	}
	if (now_ms < rec->baking_ms + (int64_t)cfg->rollout.bake_ms)
		return XD_DECIDE_WAIT;
	snprintf(why, len, "baked with %zu canar%s and %llu NACK%s", f->canaries,
		 f->canaries == 1 ? "y" : "ies", (unsigned long long)f->nacks,
		 f->nacks == 1 ? "" : "s");
	/* what require_canary let go unproven is said, not hidden */
	if (cfg->rollout.require_canary != XD_REQUIRE_PER_KEY) {
		size_t used = strlen(why);

		if (xd_rollout_unproven(XD_REQUIRE_PER_KEY, f, unproven,
					sizeof(unproven)) > 0)
			snprintf(why + used, len - used,
				 "; no canary ACKed snapshot %s", unproven);
	}
	return XD_DECIDE_PROMOTE;
}
