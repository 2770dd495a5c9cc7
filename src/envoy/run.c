/* SPDX-License-Identifier: Apache-2.0 */
#include "envoy/run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/xalloc.h"

extern char **environ;

/* The last XD_ENVOY_OUTPUT_MAX bytes of a process's output. */
struct output {
	char data[XD_ENVOY_OUTPUT_MAX + 1];
	size_t len;
};

/* `n` is one read's, at most a chunk: far below the bound. */
static void keep(struct output *o, const char *p, size_t n)
{
	XD_ASSERT(n <= XD_ENVOY_OUTPUT_MAX);
	if (o->len + n > XD_ENVOY_OUTPUT_MAX) {
		size_t drop = o->len + n - XD_ENVOY_OUTPUT_MAX;

		memmove(o->data, o->data + drop, o->len - drop);
		o->len -= drop;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How a run ended. */
struct ended {
	bool started, timed_out;
	int status; /* waitpid's, when started and not timed out */
	char why[256]; /* when not started */
};

/*
 * Runs `argv` (argv[0] looked up as posix_spawnp does) with stdin from
 * /dev/null and stdout and stderr into `out`, for at most
 * XD_ENVOY_RUN_SECONDS.
 */
static void run(char *const argv[], struct output *out, struct ended *end)
{
	posix_spawn_file_actions_t fa;
	int fds[2], rc;
	long long deadline;
	pid_t pid;
	char chunk[4096];

	memset(end, 0, sizeof(*end));
	out->len = 0;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(end->why, sizeof(end->why), "pipe: %s", strerror(errno));
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		snprintf(end->why, sizeof(end->why), "cannot run '%s': %s", argv[0],
			 strerror(rc));
		return;
	}
	end->started = true;
	deadline = now_ms() + XD_ENVOY_RUN_SECONDS * 1000LL;
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			end->timed_out = true;
			break;
		}
		rc = poll(&p, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			end->timed_out = true; /* no way left to watch it */
			break;
		}
		if (rc == 0)
			continue;
		n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break; /* EOF: it closed its output, exiting */
		keep(out, chunk, (size_t)n);
	}
	close(fds[0]);
	if (end->timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &end->status, 0) < 0 && errno == EINTR)
		;
	out->data[out->len] = '\0';
}

/* The last line of `o` with anything on it, in `buf`. */
static void last_line(const struct output *o, char *buf, size_t len)
{
	size_t e = o->len, b;

	while (e > 0 && (o->data[e - 1] == '\n' || o->data[e - 1] == ' ' ||
			 o->data[e - 1] == '\r'))
		e--;
	for (b = e; b > 0 && o->data[b - 1] != '\n'; b--)
		;
	snprintf(buf, len, "%.*s", (int)(e - b), o->data + b);
}

/* Envoy's verdict in its output: what follows the marker, its lines
 * joined by spaces. Returns false when the marker is not there. */
static bool refusal(const struct output *o, char *msg, size_t len)
{
	static const char marker[] = "error initializing configuration '";
	const char *p = NULL, *q = o->data, *e;
	size_t n = 0;

	while ((q = strstr(q, marker)) != NULL) {
		p = q;
		q += sizeof(marker) - 1;
	}
	if (p == NULL)
		return false;
	/* past the file's name: Envoy quotes it, and names ours, which
	 * holds no quote */
	p = strstr(p + sizeof(marker) - 1, "': ");
	if (p == NULL)
		return false;
	p += 3;
	e = o->data + o->len;
	while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\r'))
		e--;
	for (; p < e && n + 1 < len; p++)
		msg[n++] = *p == '\n' || *p == '\r' ? ' ' : *p;
	msg[n] = '\0';
	return true;
}

/* A directory of the run's own, and the bootstrap in it. */
static int write_bootstrap(const char *text, size_t len, char *dir,
			   size_t dirlen, char *file, size_t filelen,
			   char *why, size_t whylen)
{
	const char *tmp = getenv("TMPDIR");
	size_t off = 0;
	int fd;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	snprintf(dir, dirlen, "%s/xdsd-envoy-XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		snprintf(why, whylen, "cannot make a directory for Envoy's bootstrap in %s: %s",
			 tmp, strerror(errno));
		return -1;
	}
	snprintf(file, filelen, "%s/bootstrap.json", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", file, strerror(errno));
		rmdir(dir);
		return -1;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, whylen, "%s: %s", file,
				 n < 0 ? strerror(errno) : "short write");
			close(fd);
			unlink(file);
			rmdir(dir);
			return -1;
		}
		off += (size_t)n;
	}
	if (close(fd) != 0) {
		snprintf(why, whylen, "%s: %s", file, strerror(errno));
		unlink(file);
		rmdir(dir);
		return -1;
	}
	return 0;
}

/* Says how a process that gave no verdict ended. */
static void no_verdict(const char *envoy, const struct output *out,
		       const struct ended *end, char *msg, size_t len)
{
	char last[512];

	last_line(out, last, sizeof(last));
	if (!end->started)
		snprintf(msg, len, "%s", end->why);
	else if (end->timed_out)
		snprintf(msg, len, "'%s' gave no verdict within %d s (killed)",
			 envoy, XD_ENVOY_RUN_SECONDS);
	else if (WIFSIGNALED(end->status))
		snprintf(msg, len, "'%s' was killed by signal %d%s%s", envoy,
			 WTERMSIG(end->status), last[0] ? ": " : "", last);
	else
		snprintf(msg, len, "'%s' exited with status %d without a verdict%s%s",
			 envoy, WEXITSTATUS(end->status), last[0] ? ": " : "",
			 last);
}

enum xd_envoy_verdict xd_envoy_validate(const char *envoy, const char *text,
					size_t len, char *msg, size_t msglen)
{
	char dir[4096], file[4200];
	char *argv[] = {(char *)envoy, "--mode", "validate", "-c", file,
			"--disable-hot-restart", "--concurrency", "1",
			"--log-level", "error", "--log-format", "%v", NULL};
	struct output *out;
	struct ended end;
	enum xd_envoy_verdict v;

	if (write_bootstrap(text, len, dir, sizeof(dir), file, sizeof(file),
			    msg, msglen) != 0)
		return XD_ENVOY_FAILED;
	out = xd_calloc(1, sizeof(*out));
	run(argv, out, &end);
	unlink(file);
	rmdir(dir);
	if (end.started && !end.timed_out && WIFEXITED(end.status) &&
	    WEXITSTATUS(end.status) == 0)
		v = XD_ENVOY_ACCEPTED;
	else if (end.started && !end.timed_out && refusal(out, msg, msglen))
		v = XD_ENVOY_REFUSED;
	else if (end.started && !end.timed_out && WIFSIGNALED(end.status) &&
		 WTERMSIG(end.status) != SIGKILL) {
		/* it crashed on the bootstrap: Envoy would crash on it too */
		no_verdict(envoy, out, &end, msg, msglen);
		v = XD_ENVOY_REFUSED;
	} else {
		no_verdict(envoy, out, &end, msg, msglen);
		v = XD_ENVOY_FAILED;
	}
	free(out);
	return v;
}

int xd_envoy_version(const char *envoy, char *ver, size_t len)
{
	char *argv[] = {(char *)envoy, "--version", NULL};
	struct output *out = xd_calloc(1, sizeof(*out));
	struct ended end;
	const char *p, *slash, *end_of;
	int rc = -1;

	run(argv, out, &end);
	/* "PATH  version: <commit>/1.40.0/Clean/RELEASE/BoringSSL" */
	p = end.started && !end.timed_out && WIFEXITED(end.status) &&
			    WEXITSTATUS(end.status) == 0 ?
		    strstr(out->data, " version: ") :
		    NULL;
	slash = p != NULL ? strchr(p, '/') : NULL;
	end_of = slash != NULL ? strpbrk(slash + 1, "/ \n") : NULL;
	if (end_of != NULL && end_of > slash + 1) {
		snprintf(ver, len, "%.*s", (int)(end_of - slash - 1), slash + 1);
		rc = 0;
	} else if (!end.started || end.timed_out || !WIFEXITED(end.status) ||
		   WEXITSTATUS(end.status) != 0) {
		no_verdict(envoy, out, &end, ver, len);
	} else {
		snprintf(ver, len, "'%s --version' names no Envoy release", envoy);
	}
	free(out);
	return rc;
}
