/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process's own resource use, as Prometheus's process_* metrics
 * name it: read from /proc/self when asked.
 *
 * Thread: any.
 */
#ifndef XD_ADMIN_PROCESS_H
#define XD_ADMIN_PROCESS_H

#include <stddef.h>
#include <stdint.h>

struct xd_process_stats {
	uint64_t resident_bytes, virtual_bytes;
	double cpu_seconds;        /* user + system */
	double start_time_seconds; /* Unix time */
	size_t open_fds, max_fds;
};

/* Returns 0, or -1 when /proc could not be read (fields then 0). */
int xd_process_read(struct xd_process_stats *out);

#endif
