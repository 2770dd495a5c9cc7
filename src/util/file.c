/* SPDX-License-Identifier: Apache-2.0 */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xalloc.h"

/* What a file that is not a regular one is, for a message. */
static const char *file_kind(mode_t mode)
{
	return S_ISFIFO(mode) ? "a FIFO" :
	       S_ISDIR(mode)  ? "a directory" :
	       S_ISSOCK(mode) ? "a socket" :
	       S_ISCHR(mode)  ? "a character device" :
	       S_ISBLK(mode)  ? "a block device" :
				"not a regular file";
}

/* "256 MiB", "1 MiB", "4 GiB", or bytes. */
static void limit_text(char *buf, size_t len, uint64_t max)
{
	if (max >= (1ull << 30) && max % (1ull << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(max >> 30));
	else if (max >= (1ull << 20) && max % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(max >> 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)max);
}

/* Why `path` could not be looked at or opened; the user the process
 * runs as when that is the reason (a service's dynamic user, say). */
static void cannot_read(const char *path, const char *what, int err,
			struct xd_diag *diag)
{
	if (err == EACCES || err == EPERM)
		xd_diag_add(diag, "%s: cannot read the %s: %s (running as uid %u)",
			    path, what, strerror(err), (unsigned)geteuid());
	else
		xd_diag_add(diag, "%s: cannot read the %s: %s", path, what,
			    strerror(err));
}

int xd_file_open(const char *path, const char *what, uint64_t max,
		 struct stat *st, int *err, struct xd_diag *diag)
{
	struct stat before;
	char limit[32];
	int fd, unused;

	if (err == NULL)
		err = &unused;
	*err = 0;
	if (stat(path, &before) != 0) {
		*err = errno;
		cannot_read(path, what, *err, diag);
		return -1;
	}
	if (!S_ISREG(before.st_mode)) {
		xd_diag_add(diag, "%s: the %s is %s; it must be a regular file",
			    path, what, file_kind(before.st_mode));
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		cannot_read(path, what, *err, diag);
		return -1;
	}
	if (fstat(fd, st) != 0) {
		*err = errno;
		cannot_read(path, what, *err, diag);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		xd_diag_add(diag, "%s: the %s was replaced by %s while being opened; it must be a regular file",
			    path, what, file_kind(st->st_mode));
		close(fd);
		return -1;
	}
	if ((uint64_t)st->st_size > max) {
		limit_text(limit, sizeof(limit), max);
		xd_diag_add(diag, "%s: the %s is %lld bytes, larger than the limit of %s",
			    path, what, (long long)st->st_size, limit);
		close(fd);
		return -1;
	}
	return fd;
}

int xd_file_read_fd(int fd, const char *path, const char *what, char *buf,
		    size_t len, struct xd_diag *diag)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xd_diag_add(diag, "%s: cannot read the %s: %s", path,
				    what, strerror(errno));
			return -1;
		}
		if (n == 0) {
			xd_diag_add(diag, "%s: the %s shrank while it was read (%zu of %zu bytes); read it again once it is in place",
				    path, what, got, len);
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

int xd_file_read(const char *path, const char *what, uint64_t max,
		 struct xd_file *out, int *err, struct xd_diag *diag)
{
	int fd = xd_file_open(path, what, max, &out->st, err, diag);

	out->text = NULL;
	out->len = 0;
	if (fd < 0)
		return -1;
	/* bounded by `max`, checked by xd_file_open */
	out->len = (size_t)out->st.st_size;
	out->text = xd_malloc(out->len + 1);
	if (xd_file_read_fd(fd, path, what, out->text, out->len, diag) != 0) {
		close(fd);
		xd_file_free(out, true);
		return -1;
	}
	close(fd);
	out->text[out->len] = '\0';
	return 0;
}

void xd_file_free(struct xd_file *f, bool wipe)
{
	if (f->text != NULL && wipe)
		memset(f->text, 0, f->len);
	free(f->text);
	f->text = NULL;
	f->len = 0;
}

/* ---------------- writing ---------------- */

int xd_file_sync_dir(const char *path)
{
	char *dir = xd_strdup(path), *slash = strrchr(dir, '/');
	int fd, rc = -1;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	free(dir);
	return rc;
}

char *xd_file_tmp_template(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ?
		       xd_asprintf("%.*s/.%s" XD_FILE_TMP_SUFFIX,
				   (int)(slash - path), path, slash + 1) :
		       xd_asprintf(".%s" XD_FILE_TMP_SUFFIX, path);
}

int xd_file_write_whole(const char *path, const void *data, size_t len,
			char *err, size_t errlen)
{
	char *tmp = xd_file_tmp_template(path);
	const char *p = data;
	size_t done = 0;
	int fd, e = 0, rc = -1;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create a temporary file '%s': %s",
			 path, tmp, strerror(errno));
		goto out;
	}
	while (done < len && e == 0) {
		ssize_t n = write(fd, p + done, len - done);

		if (n > 0)
			done += (size_t)n;
		else if (n < 0 && errno != EINTR)
			e = errno;
	}
	if (e == 0 && fsync(fd) != 0)
		e = errno;
	if (close(fd) != 0 && e == 0)
		e = errno;
	if (e != 0) {
		snprintf(err, errlen, "%s: cannot write '%s': %s", path, tmp,
			 strerror(e));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: cannot rename '%s' over it: %s", path,
			 tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (xd_file_sync_dir(path) != 0) {
		snprintf(err, errlen, "%s: written, but its directory cannot be synced: %s",
			 path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}
