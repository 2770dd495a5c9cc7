/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/process.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

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

/* Directory entries read between two looks at the clock. */
#define FD_BATCH 256

void xd_fd_count_start(struct xd_fd_count *c)
{
	c->n = 0;
	c->dir = opendir("/proc/self/fd"); /* NULL: nothing to count */
}

bool xd_fd_count_step(struct xd_fd_count *c, uint64_t deadline_ns)
{
	struct dirent *e;

	while (c->dir != NULL) {
		for (int i = 0; i < FD_BATCH; i++) {
			e = readdir(c->dir);
			if (e == NULL) {
				xd_fd_count_stop(c);
				/* not the one reading the directory */
				if (c->n > 0)
					c->n--;
				return true;
			}
			if (e->d_name[0] != '.')
				c->n++;
		}
		if (uv_hrtime() >= deadline_ns)
			return false;
	}
	return true;
}

void xd_fd_count_stop(struct xd_fd_count *c)
{
	if (c->dir != NULL)
		closedir(c->dir);
	c->dir = NULL;
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
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		out->max_fds = (size_t)rl.rlim_cur;
	return 0;
}
