/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process's own resource use, as Prometheus's process_* metrics
 * name it: read from /proc/self when asked.
 *
 * Thread: any; a count, one owner at a time.
 */
#ifndef XD_ADMIN_PROCESS_H
#define XD_ADMIN_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xd_process_stats {
	uint64_t resident_bytes, virtual_bytes;
	double cpu_seconds;        /* user + system */
	double start_time_seconds; /* Unix time */
	size_t open_fds;           /* 0: counted by xd_fd_count */
	size_t max_fds;
};

/* Returns 0, or -1 when /proc could not be read (fields then 0). The
 * descriptors are not counted: one a client, 50,000 entries of
 * /proc/self/fd take milliseconds to list (xd_fd_count). */
int xd_process_read(struct xd_process_stats *out);

/* The open descriptors, counted a slice at a time (for /metrics'
 * process_open_fds, written between loop turns, pager.h). */
struct xd_fd_count {
	void *dir; /* the DIR of /proc/self/fd while counting; NULL: done */
	size_t n;  /* counted so far; the open descriptors once done */
};

void xd_fd_count_start(struct xd_fd_count *c);

/* Reads entries until done (true) or the uv_hrtime clock passes
 * `deadline_ns` (false). */
bool xd_fd_count_step(struct xd_fd_count *c, uint64_t deadline_ns);

/* Closes the directory if the count stopped before its end. */
void xd_fd_count_stop(struct xd_fd_count *c);

#endif
