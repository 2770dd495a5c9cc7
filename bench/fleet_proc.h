/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Figures read from /proc: a process's RSS, CPU time and context
 * switches (the server's, from --server-pid), the CPU time of the whole
 * machine, and this process's own CPU time. Each is -1 when it cannot be
 * read (pid <= 0: no --server-pid; the process gone).
 *
 * No state; any thread.
 */
#ifndef BENCH_FLEET_PROC_H
#define BENCH_FLEET_PROC_H

/* A "Key: N kB" line of /proc/<pid>/status, e.g. VmRSS, VmHWM. */
long proc_status_kb(long pid, const char *key);
/* utime + stime of pid, in seconds. */
double proc_cpu_s(long pid);
/* Context switches of every thread of pid. */
long proc_switches(long pid);
/* CPU time all processes spent, in seconds. */
double system_busy_s(void);
/* This process's user + system CPU time, in seconds. */
double self_cpu_s(void);

#endif
