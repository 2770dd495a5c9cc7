/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/fdlimit.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "util/log.h"
#include "util/loop_thread.h"

unsigned long xd_fdlimit_raise(void)
{
	struct rlimit rl;
	rlim_t was;

	XD_ASSERT_LOOP(); /* at start, on the thread that runs the loop */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		xd_warn("cannot read the open files limit: %s", strerror(errno));
		return 0;
	}
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			xd_warn("cannot raise the open files limit from %lu to %lu: %s",
				(unsigned long)was, (unsigned long)rl.rlim_max,
				strerror(errno));
			rl.rlim_cur = was;
		}
	}
	if (rl.rlim_cur == RLIM_INFINITY)
		xd_info("open files: no limit");
	else if (rl.rlim_cur != was)
		xd_info("open files: limit %lu (raised from %lu to the hard limit): about as many client connections",
			(unsigned long)rl.rlim_cur, (unsigned long)was);
	else
		xd_info("open files: limit %lu (the hard limit): about as many client connections",
			(unsigned long)rl.rlim_cur);
	return rl.rlim_cur == RLIM_INFINITY ? (unsigned long)-1 :
					      (unsigned long)rl.rlim_cur;
}

long xd_fdlimit_open_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}
