/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/process.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Boot time, Unix seconds (/proc/stat "btime"). */
static long long boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	long long btime = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	fclose(f);
	return btime;
}

static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0; /* not the one reading the directory */
}

int xd_process_read(struct xd_process_stats *out)
{
	char buf[1024], *p;
	FILE *f;
	size_t n;
	unsigned long long utime, stime, start, vsize;
	long long rss;
	double ticks = (double)sysconf(_SC_CLK_TCK);
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;

	memset(out, 0, sizeof(*out));
	f = fopen("/proc/self/stat", "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields are
	 * counted from the last ')' */
	p = strrchr(buf, ')');
	if (p == NULL ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
		   "%*d %*d %*d %*d %*d %*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return -1;
	out->cpu_seconds = (double)(utime + stime) / ticks;
	out->start_time_seconds = (double)boot_time() + (double)start / ticks;
	out->virtual_bytes = vsize;
	out->resident_bytes = (uint64_t)rss * (uint64_t)page;
	out->open_fds = count_fds();
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		out->max_fds = (size_t)rl.rlim_cur;
	return 0;
}
