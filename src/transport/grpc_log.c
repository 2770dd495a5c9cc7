/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/grpc_log.h"

#include <grpc/support/log.h>
#include <string.h>

#include "transport/handshakes.h"
#include "util/common.h"
#include "util/log.h"

/* Per kind of drop: a few lines a second, then a count. */
#define DROP_BURST 5
#define DROP_WINDOW_MS 1000

/* A connection event, told by what follows the peer in the message
 * ("<peer>: <marker>..."). */
struct drop_kind {
	const char *marker;
	const char *says;
	struct xd_log_limit limit;
};

static struct drop_kind drops[] = {
	{": Keepalive watchdog fired",
	 "keepalive ping not answered within keepalive_timeout",
	 XD_LOG_LIMIT_INIT(DROP_BURST, DROP_WINDOW_MS)},
	{": Sending goaway err=UNKNOWN:Did not receive HTTP/2 settings before handshake timeout",
	 "no HTTP/2 handshake within handshake_timeout",
	 XD_LOG_LIMIT_INIT(DROP_BURST, DROP_WINDOW_MS)},
};

/* A dropped connection: a warning naming the peer, if the limit allows. */
static bool log_drop(const char *message)
{
	for (size_t i = 0; i < XD_ARRAY_LEN(drops); i++) {
		const char *at = strstr(message, drops[i].marker);
		unsigned long dropped;

		if (at == NULL)
			continue;
		if (!xd_log_limit_take(&drops[i].limit, &dropped))
			return true;
		if (dropped > 0)
			xd_warn("connection from %.*s closed: %s (%lu more like it not logged)",
				XD_LOG_CLIP((size_t)(at - message)), message,
				drops[i].says, dropped);
		else
			xd_warn("connection from %.*s closed: %s",
				XD_LOG_CLIP((size_t)(at - message)), message,
				drops[i].says);
		return true;
	}
	return false;
}

static void on_grpc_log(gpr_log_func_args *args)
{
	switch (xd_handshakes_on_log(args->message)) {
	case XD_HANDSHAKE_TRACE:
		return;
	case XD_HANDSHAKE_DEBUG:
		xd_debug("grpc: %s", args->message);
		return;
	case XD_HANDSHAKE_OTHER:
		break;
	}
	if (args->severity == GPR_LOG_SEVERITY_ERROR) {
		/* gRPC logs every failed handshake or reset peer as ERROR;
		 * to the daemon those are a client's problem, not its own. */
		xd_warn("grpc: %s", args->message);
		return;
	}
	if (log_drop(args->message))
		return;
	xd_debug("grpc: %s", args->message);
}

void xd_grpc_log_route(void)
{
	gpr_set_log_function(on_grpc_log);
	/* The drops above are among gRPC's DEBUG messages, so all of them
	 * come here; gRPC's tracers are off, so they are few (start-up,
	 * connection events), not one per message sent. */
	gpr_set_log_verbosity(GPR_LOG_SEVERITY_DEBUG);
}
