/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Figures read from /proc (fleet_proc.h): a process's RSS, CPU time and
 * context switches, the machine's busy time, this process's CPU time.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fleet_proc.h"

long proc_status_kb(long pid, const char *key)
{
	char path[64], line[256];
	FILE *f;
	long v = -1;
	size_t kl = strlen(key);

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

double proc_cpu_s(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');       /* comm may hold spaces */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The busy jiffies of /proc/stat. */
double system_busy_s(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (f == NULL)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return -1;
	/* user nice system [idle iowait] irq softirq steal */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
	       (double)sysconf(_SC_CLK_TCK);
}

double self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

long proc_switches(long pid)
{
	char pat[64], line[256];
	glob_t g;
	long total = 0;

	if (pid <= 0)
		return -1;
	snprintf(pat, sizeof(pat), "/proc/%ld/task/*/status", pid);
	if (glob(pat, 0, NULL, &g) != 0)
		return -1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "ctxt_switches:"))
				total += strtol(strchr(line, ':') + 1, NULL, 10);
		fclose(f);
	}
	globfree(&g);
	return total;
}
