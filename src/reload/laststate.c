/* SPDX-License-Identifier: Apache-2.0 */
#include "reload/laststate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "util/clock.h"
#include "util/common.h"
#include "util/file.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

#define MAGIC "xdsdlast"
#define FORMAT 1u
#define HEADER_LEN 32u /* magic, format, keys, saved at, body length */
#define TRAILER_LEN 8u /* the checksum */
/* Names are paths (the etcd key of a value, at most a few KiB). */
#define NAME_MAX_LEN 65536u

/* ---------------- writing ---------------- */

/* Writes go through this buffer: a state of many small files would
 * otherwise take a system call per field. */
#define WBUF 65536

struct writer {
	int fd;
	unsigned char buf[WBUF];
	size_t n;
	XXH3_state_t sum;
	int err; /* the first errno, 0 while all is well */
	bool hash_only; /* content_sum(): summed, never written */
};

static void flush(struct writer *w)
{
	size_t off = 0;

	while (w->err == 0 && off < w->n) {
		ssize_t k = write(w->fd, w->buf + off, w->n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			w->err = errno;
		else
			off += (size_t)k;
	}
	w->n = 0;
}

static void put(struct writer *w, const void *p, size_t len, bool summed)
{
	const unsigned char *b = p;

	if (summed)
		XXH3_64bits_update(&w->sum, p, len);
	if (w->hash_only)
		return;
	while (len > 0 && w->err == 0) {
		size_t k = WBUF - w->n < len ? WBUF - w->n : len;

		memcpy(w->buf + w->n, b, k);
		w->n += k;
		b += k;
		len -= k;
		if (w->n == WBUF)
			flush(w);
	}
}

static void put_u(struct writer *w, uint64_t v, unsigned bytes)
{
	unsigned char b[8];

	for (unsigned i = 0; i < bytes; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(w, b, bytes, true);
}

static void put_str(struct writer *w, const char *s)
{
	size_t len = strlen(s);

	put_u(w, len, 4);
	put(w, s, len, true);
}

static uint64_t body_length(const struct xd_snapkey *keys, size_t n)
{
	uint64_t len = 0;

	for (size_t i = 0; i < n; i++) {
		len += 4 + strlen(keys[i].key) + 4;
		for (size_t f = 0; f < keys[i].nfiles; f++)
			len += 4 + strlen(keys[i].files[f].path) + 1 + 8 +
			       keys[i].files[f].len;
	}
	return len;
}

/* The body, as the header's length counts it. */
static void put_body(struct writer *w, const struct xd_snapkey *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_str(w, keys[i].key);
		put_u(w, keys[i].nfiles, 4);
		for (size_t f = 0; f < keys[i].nfiles; f++) {
			const struct xd_snapfile *sf = &keys[i].files[f];

			put_str(w, sf->path);
			put_u(w, sf->json ? 1 : 0, 1);
			put_u(w, sf->len, 8);
			put(w, sf->text, sf->len, true);
		}
	}
}

/* What a state holds, without when it was saved: XXH3-64 of its body
 * seeded with its key count, so that the same files give the same sum
 * whenever they are saved. */
static uint64_t content_sum(const struct xd_snapkey *keys, size_t n)
{
	struct writer *w = xd_calloc(1, sizeof(*w));
	uint64_t sum;

	w->hash_only = true;
	XXH3_64bits_reset_withSeed(&w->sum, n);
	put_body(w, keys, n);
	sum = XXH3_64bits_digest(&w->sum);
	free(w);
	return sum;
}

int xd_laststate_write(const char *path, const struct xd_snapkey *keys,
		       size_t n, int64_t saved_at_ms, char *err,
		       size_t errlen, size_t *bytes)
{
	struct writer *w = xd_calloc(1, sizeof(*w));
	char *tmp = xd_file_tmp_template(path);
	uint64_t body = body_length(keys, n), sum;
	unsigned char trailer[8];
	int rc = -1;

	XD_ASSERT(n <= UINT32_MAX);
	if (HEADER_LEN + body + TRAILER_LEN > XD_LASTSTATE_MAX_BYTES) {
		snprintf(err, errlen, "%s: %llu bytes of snapshots, more than the %llu a saved state may hold",
			 path, (unsigned long long)body,
			 (unsigned long long)XD_LASTSTATE_MAX_BYTES);
		w->fd = -1;
		goto out;
	}
	w->fd = mkostemp(tmp, O_CLOEXEC);
	if (w->fd < 0) {
		snprintf(err, errlen, "%s: cannot create a temporary file '%s': %s",
			 path, tmp, strerror(errno));
		goto out;
	}
	XXH3_64bits_reset(&w->sum);
	put(w, MAGIC, 8, true);
	put_u(w, FORMAT, 4);
	put_u(w, n, 4);
	put_u(w, (uint64_t)saved_at_ms, 8);
	put_u(w, body, 8);
	put_body(w, keys, n);
	sum = XXH3_64bits_digest(&w->sum);
	for (unsigned i = 0; i < 8; i++)
		trailer[i] = (unsigned char)(sum >> (8 * i));
	put(w, trailer, sizeof(trailer), false);
	flush(w);
	if (w->err == 0 && fsync(w->fd) != 0)
		w->err = errno;
	if (close(w->fd) != 0 && w->err == 0)
		w->err = errno;
	if (w->err != 0) {
		snprintf(err, errlen, "%s: cannot write '%s': %s", path, tmp,
			 strerror(w->err));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: cannot rename '%s' over it: %s",
			 path, tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (xd_file_sync_dir(path) != 0) {
		snprintf(err, errlen, "%s: written, but its directory cannot be synced: %s",
			 path, strerror(errno));
		goto out;
	}
	*bytes = HEADER_LEN + body + TRAILER_LEN;
	rc = 0;
out:
	free(tmp);
	free(w);
	return rc;
}

/* ---------------- reading ---------------- */

struct reader {
	const unsigned char *p;
	size_t len, off;
	bool bad;
	char why[160];
};

static uint64_t get_u(struct reader *r, unsigned bytes, const char *what)
{
	uint64_t v = 0;

	if (r->bad)
		return 0;
	if (r->len - r->off < bytes) {
		r->bad = true;
		snprintf(r->why, sizeof(r->why), "%s at byte %zu runs past the end",
			 what, r->off);
		return 0;
	}
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += bytes;
	return v;
}

/* `len` bytes as a new NUL-terminated string, at most `max`. */
static char *get_bytes(struct reader *r, uint64_t len, uint64_t max,
		       const char *what)
{
	char *s;

	if (r->bad)
		return NULL;
	if (len > max || r->len - r->off < len) {
		r->bad = true;
		snprintf(r->why, sizeof(r->why), "%s of %llu bytes at byte %zu %s",
			 what, (unsigned long long)len, r->off,
			 len > max ? "is too long" : "runs past the end");
		return NULL;
	}
	s = xd_malloc((size_t)len + 1);
	memcpy(s, r->p + r->off, (size_t)len);
	s[len] = '\0';
	r->off += (size_t)len;
	return s;
}

static void parse_body(struct reader *r, struct xd_snapkey *keys, size_t n)
{
	for (size_t i = 0; i < n && !r->bad; i++) {
		struct xd_snapkey *k = &keys[i];
		uint64_t nfiles;

		k->key = get_bytes(r, get_u(r, 4, "a key's length"),
				   NAME_MAX_LEN, "a key");
		nfiles = get_u(r, 4, "a key's file count");
		if (r->bad)
			break;
		/* each file takes at least 13 bytes: no count can claim
		 * more than what is left to read */
		if (k->key[0] == '\0' || nfiles == 0 ||
		    nfiles > (r->len - r->off) / 13) {
			r->bad = true;
			snprintf(r->why, sizeof(r->why),
				 "key %zu ('%.64s') has %llu files", i, k->key,
				 (unsigned long long)nfiles);
			break;
		}
		k->files = xd_calloc((size_t)nfiles, sizeof(*k->files));
		k->nfiles = (size_t)nfiles;
		for (size_t f = 0; f < k->nfiles && !r->bad; f++) {
			struct xd_snapfile *sf = &k->files[f];
			uint64_t flags, len;

			sf->path = get_bytes(r, get_u(r, 4, "a file name's length"),
					     NAME_MAX_LEN, "a file name");
			flags = get_u(r, 1, "a file's kind");
			len = get_u(r, 8, "a file's length");
			sf->text = get_bytes(r, len, XD_SNAPSHOT_MAX_FILE,
					     "a file's text");
			sf->len = (size_t)len;
			sf->json = flags == 1;
			if (!r->bad && flags > 1) {
				r->bad = true;
				snprintf(r->why, sizeof(r->why),
					 "file '%.64s' is of unknown kind %llu",
					 sf->path, (unsigned long long)flags);
			}
		}
	}
	if (!r->bad && r->off != r->len) {
		r->bad = true;
		snprintf(r->why, sizeof(r->why),
			 "%zu bytes follow the last file", r->len - r->off);
	}
}

/* The whole file, at most XD_LASTSTATE_MAX_BYTES: 0, 1 (none), -1. A
 * FIFO or a device in its place is refused without being opened
 * (util/file.h): it would hold the start, or the save, for good. */
static int slurp(const char *path, unsigned char **out, size_t *len,
		 struct xd_diag *why)
{
	struct xd_diag mine = XD_DIAG_INIT;
	struct xd_file file;
	int err;

	if (xd_file_read(path, "saved state", XD_LASTSTATE_MAX_BYTES, &file,
			 &err, &mine) != 0) {
		if (err == ENOENT) { /* nothing saved yet */
			xd_diag_clear(&mine);
			return 1;
		}
		xd_diag_append(why, &mine);
		return -1;
	}
	*out = (unsigned char *)file.text;
	*len = file.len;
	return 0;
}

int xd_laststate_read(const char *path, struct xd_snapkey **keys, size_t *n,
		      int64_t *saved_at_ms, struct xd_diag *why)
{
	unsigned char *data = NULL;
	size_t len = 0;
	struct reader r = {0};
	uint64_t format, nkeys, body, sum = 0;
	int rc = slurp(path, &data, &len, why);

	*keys = NULL;
	*n = 0;
	if (rc != 0)
		return rc;
	r.p = data;
	r.len = len;
	if (len < HEADER_LEN + TRAILER_LEN || memcmp(data, MAGIC, 8) != 0) {
		xd_diag_add(why, "%s: not a saved state of xdsd (%zu bytes, no '" MAGIC "' header)",
			    path, len);
		free(data);
		return -1;
	}
	r.off = 8;
	format = get_u(&r, 4, "the format");
	nkeys = get_u(&r, 4, "the key count");
	*saved_at_ms = (int64_t)get_u(&r, 8, "the time saved");
	body = get_u(&r, 8, "the body's length");
	for (unsigned i = 0; i < 8; i++)
		sum |= (uint64_t)data[len - 8 + i] << (8 * i);
	if (format != FORMAT) {
		xd_diag_add(why, "%s: format %llu, this xdsd reads format %u",
			    path, (unsigned long long)format, FORMAT);
	} else if (body != len - HEADER_LEN - TRAILER_LEN) {
		xd_diag_add(why, "%s: %zu bytes where its header says %llu: truncated or extended",
			    path, len, (unsigned long long)body + HEADER_LEN + TRAILER_LEN);
	} else if (XXH3_64bits(data, len - TRAILER_LEN) != sum) {
		xd_diag_add(why, "%s: checksum mismatch: the file is corrupt", path);
	} else if (nkeys == 0 || nkeys > body / 8) {
		xd_diag_add(why, "%s: %llu keys in %llu bytes", path,
			    (unsigned long long)nkeys, (unsigned long long)body);
	} else {
		*keys = xd_calloc((size_t)nkeys, sizeof(**keys));
		*n = (size_t)nkeys;
		r.len = len - TRAILER_LEN;
		parse_body(&r, *keys, *n);
		if (r.bad)
			xd_diag_add(why, "%s: malformed: %s", path, r.why);
	}
	free(data);
	if (xd_diag_total(why) == 0)
		return 0;
	xd_snapdir_free(*keys, *n);
	*keys = NULL;
	*n = 0;
	return -1;
}

/* ---------------- what is on disk ---------------- */

/* The saved state on disk as last written or probed, to tell whether
 * a save would change it. The file is known by its inode, size and
 * modification time: replaced or edited behind xdsd's back, it is
 * probed again. */
struct on_disk {
	bool known;
	uint64_t sum; /* content_sum() of what it holds */
	int64_t saved_at_ms;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

static void disk_stat(struct on_disk *d, const struct stat *st)
{
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->size = st->st_size;
	d->mtime = st->st_mtim;
}

/* Whether `path` is still the file `d` describes. */
static bool disk_same(const struct on_disk *d, const char *path)
{
	struct stat st;

	return d->known && stat(path, &st) == 0 && st.st_dev == d->dev &&
	       st.st_ino == d->ino && st.st_size == d->size &&
	       st.st_mtim.tv_sec == d->mtime.tv_sec &&
	       st.st_mtim.tv_nsec == d->mtime.tv_nsec;
}

/*
 * What `path` holds, summed as content_sum() sums the files it was
 * written from: read and checked as a start-up read would, so that
 * the format is parsed in one place. `d` is known only for a whole
 * state whose checksum holds; anything else (none, damaged, another
 * format) is unknown, and the next save writes. Its identity is taken
 * first: a file replaced meanwhile is probed again at the next save.
 */
static void disk_probe(const char *path, struct on_disk *d, char *bad,
		       size_t badlen)
{
	struct xd_diag why = XD_DIAG_INIT;
	struct xd_snapkey *keys;
	size_t n;
	int64_t at;
	struct stat st;

	d->known = false;
	if (stat(path, &st) != 0 ||
	    xd_laststate_read(path, &keys, &n, &at, &why) != 0) {
		/* what is there is replaced: said once it is */
		if (why.count > 0)
			snprintf(bad, badlen, "%s", why.msgs[0]);
		xd_diag_clear(&why);
		return;
	}
	d->sum = content_sum(keys, n);
	d->saved_at_ms = at;
	disk_stat(d, &st);
	d->known = true;
	xd_snapdir_free(keys, n);
}

/* ---------------- the daemon's state ---------------- */

struct xd_laststate {
	uv_loop_t *loop;
	char *dir, *path;
	struct xd_laststate_info info;

	/* The save on the thread pool: its files and outcome (written
	 * there, read here once it is over). */
	uv_work_t work;
	bool saving;
	struct xd_snapkey *keys;
	size_t nkeys;
	int64_t at_ms;
	int rc;
	bool unchanged; /* the state on disk holds these files already */
	size_t bytes;
	double seconds;
	char err[1024];
	char replaced[512]; /* why what was on disk was unusable, or "" */
	int64_t failing_changed_ms; /* info.save_failing last changed (0: never) */
	/* The newest accepted while it ran, saved after it. */
	bool waiting;
	struct xd_snapkey *next;
	size_t nnext;
	/* A staged rollout's change, saved once promoted
	 * (xd_laststate_held): one set at most, the newest. */
	struct xd_snapkey *held;
	size_t nheld;
	/* The file as the saves left it: used by one save at a time, on
	 * the thread pool. */
	struct on_disk disk;
};

/* Whether `name` is what mkostemp makes of the leaf of `tmpl`
 * (".NAME.XXXXXX"): the X's replaced by letters and digits. */
static bool is_tmp_name(const char *name, const char *tmpl)
{
	size_t fixed = strlen(tmpl) - (sizeof(XD_FILE_TMP_SUFFIX) - 2);

	if (strlen(name) != strlen(tmpl) || strncmp(name, tmpl, fixed) != 0)
		return false;
	for (const char *c = name + fixed; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9')))
			return false;
	return true;
}

/*
 * The temporary files of saves cut short (xdsd killed, or the machine
 * stopped, between the temporary file's creation and its rename), each
 * as large as the state it was to hold: nothing else ever reads or
 * removes them. At start no save of this xdsd has begun, so every
 * regular file of the state directory named as a save's temporary file
 * is one; it is removed and logged. Nothing else is touched: other
 * names, and anything not a regular file, whatever its name.
 */
static void remove_leftovers(const char *dir, const char *path)
{
	char *tmpl = xd_file_tmp_template(path), *leaf = strrchr(tmpl, '/');
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	leaf = leaf != NULL ? leaf + 1 : tmpl;
	if (d == NULL) {
		/* none yet: made at the first save */
		if (errno != ENOENT)
			xd_warn("cannot look for temporary files left in %s: %s",
				dir, strerror(errno));
		free(tmpl);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (!is_tmp_name(e->d_name, leaf) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			xd_info("removed %s/%s (%lld bytes), the temporary file of a save of the last good state that was cut short",
				dir, e->d_name, (long long)st.st_size);
		else
			xd_warn("cannot remove %s/%s, the temporary file of a save of the last good state that was cut short: %s",
				dir, e->d_name, strerror(errno));
	}
	closedir(d);
	free(tmpl);
}

struct xd_laststate *xd_laststate_new(uv_loop_t *loop, const char *dir)
{
	struct xd_laststate *s = xd_calloc(1, sizeof(*s));

	XD_ASSERT_LOOP();
	s->loop = loop;
	s->dir = xd_strdup(dir);
	s->path = xd_asprintf("%s/%s", dir, XD_LASTSTATE_FILE);
	s->info.dir = s->dir;
	s->info.path = s->path;
	s->work.data = s;
	remove_leftovers(s->dir, s->path);
	return s;
}

/* ---------------- as a source (source.h) ---------------- */

/* Any thread: only the path (fixed) is read. */
static int src_read(void *self, void *taken XD_UNUSED,
		    struct xd_parsed_cache *parsed XD_UNUSED,
		    struct xd_snapkey **keys, size_t *n, int64_t *at_ms,
		    struct xd_diag *diag)
{
	const struct xd_laststate *s = self;

	*keys = NULL;
	*n = 0;
	*at_ms = 0;
	return xd_laststate_read(s->path, keys, n, at_ms, diag);
}

/* Up while the newest save (if any) succeeded: the state on disk is
 * what was last accepted. */
static void src_health(const void *self, struct xd_source_health *out)
{
	const struct xd_laststate *s = self;
	const struct xd_laststate_info *i = &s->info;

	XD_ASSERT_LOOP();
	memset(out, 0, sizeof(*out));
	out->name = "last_good";
	out->up = !i->save_failing;
	out->since_ms = s->failing_changed_ms;
	if (i->last_save_error != NULL)
		snprintf(out->last_error, sizeof(out->last_error), "%s",
			 i->last_save_error);
	out->last_error_ms = i->last_save_error_at_ms;
	out->last_good_ms = i->saved_at_ms;
}

static const struct xd_snapsource_ops src_ops = {
	.name = "last_good",
	.take = NULL, /* read whole by each load that wants it */
	.read = src_read,
	.read_done = NULL,
	.health = src_health,
	.stop = NULL,
};

struct xd_snapsource xd_laststate_source(struct xd_laststate *s)
{
	return (struct xd_snapsource){&src_ops, s};
}

static void clear_errors(struct xd_laststate_info *i)
{
	for (size_t k = 0; k < i->nkept; k++)
		free(i->errors[k]);
	free(i->errors);
	i->errors = NULL;
	i->nkept = i->nerrors = 0;
}

void xd_laststate_serving(struct xd_laststate *s, const char *source,
			  int64_t saved_at_ms, const struct xd_diag *refused)
{
	struct xd_laststate_info *i = &s->info;
	char when[32], first[600] = "";

	XD_ASSERT_LOOP();
	clear_errors(i);
	i->serving = true;
	i->served_saved_at_ms = saved_at_ms;
	i->saved_at_ms = saved_at_ms;
	i->since_ms = xd_wall_ms();
	i->nerrors = xd_diag_total(refused);
	i->errors = xd_diag_copy_first(refused, XD_LASTSTATE_ERRORS_KEPT,
				       &i->nkept);
	xd_jw_time(when, saved_at_ms);
	if (i->nkept > 0)
		snprintf(first, sizeof(first), ": %s%s", i->errors[0],
			 i->nerrors > 1 ? " (and more above)" : "");
	xd_warn("SERVING THE LAST GOOD STATE saved %s (%s): the snapshots of %s are refused, %zu error%s%s; they stay refused until fixed",
		when, s->path, source, i->nerrors, i->nerrors == 1 ? "" : "s",
		first);
}

static void save_start(struct xd_laststate *s);

/* The save just tried failed, for s->err: said and shown until a save
 * succeeds (the state on disk is older than what is served). */
static void save_failed(struct xd_laststate *s)
{
	s->info.saves_failed++;
	if (!s->info.save_failing)
		s->failing_changed_ms = xd_wall_ms();
	s->info.save_failing = true;
	s->info.last_save_error_at_ms = xd_wall_ms();
	free(s->info.last_save_error);
	s->info.last_save_error = xd_strdup(s->err);
	xd_error("cannot save the last good state: %s (the snapshots are served all the same)",
		 s->err);
}

/* On the thread pool. A state on disk that holds these files already
 * is left as it is (and its time with it): a reload that changes
 * nothing costs no write and no fsync. */
static void save_work(uv_work_t *w)
{
	struct xd_laststate *s = w->data;
	uint64_t t0 = xd_mono_ms(), sum = content_sum(s->keys, s->nkeys);
	struct stat st;

	if (!disk_same(&s->disk, s->path))
		disk_probe(s->path, &s->disk, s->replaced, sizeof(s->replaced));
	if (s->disk.known && s->disk.sum == sum) {
		s->unchanged = true;
		s->at_ms = s->disk.saved_at_ms;
		return;
	}
	s->disk.known = false; /* until this one is written */
	if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
		snprintf(s->err, sizeof(s->err), "%s: cannot create the directory: %s",
			 s->dir, strerror(errno));
		s->rc = -1;
		return;
	}
	s->rc = xd_laststate_write(s->path, s->keys, s->nkeys, s->at_ms,
				   s->err, sizeof(s->err), &s->bytes);
	s->seconds = (double)(xd_mono_ms() - t0) / 1000.0;
	if (s->rc == 0 && stat(s->path, &st) == 0) {
		s->disk.sum = sum;
		s->disk.saved_at_ms = s->at_ms;
		disk_stat(&s->disk, &st);
		s->disk.known = true;
	}
}

static void save_done(uv_work_t *w, int status)
{
	struct xd_laststate *s = w->data;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(s->saving, "save to %s over twice", s->path);
	s->saving = false;
	xd_snapdir_free(s->keys, s->nkeys);
	s->keys = NULL;
	s->nkeys = 0;
	if (status != 0 && s->rc == 0) {
		s->rc = -1;
		snprintf(s->err, sizeof(s->err), "%s: save cancelled", s->path);
	}
	if (s->rc == 0 && s->info.save_failing) {
		s->info.save_failing = false;
		s->failing_changed_ms = xd_wall_ms();
	}
	if (s->rc == 0 && s->unchanged) {
		char when[32];

		s->info.saves_unchanged++;
		s->info.saved_at_ms = s->at_ms;
		xd_jw_time(when, s->at_ms);
		xd_info("the last good state in %s holds these snapshots already (saved %s): not rewritten",
			s->path, when);
	} else if (s->rc == 0) {
		s->info.saves_ok++;
		s->info.saved_at_ms = s->at_ms;
		if (s->replaced[0] != '\0')
			xd_warn("the last good state on disk was unusable and is replaced: %s",
				s->replaced);
		xd_info("saved the last good state to %s (%zu bytes) in %.3f s",
			s->path, s->bytes, s->seconds);
	} else {
		save_failed(s);
	}
	if (s->waiting) {
		s->waiting = false;
		s->keys = s->next;
		s->nkeys = s->nnext;
		s->next = NULL;
		s->nnext = 0;
		save_start(s);
	}
}

static void save_start(struct xd_laststate *s)
{
	int rc;

	s->saving = true;
	s->at_ms = xd_wall_ms();
	s->rc = 0;
	s->unchanged = false;
	s->err[0] = '\0';
	s->replaced[0] = '\0';
	rc = uv_queue_work(s->loop, &s->work, save_work, save_done);
	if (rc == 0)
		return;
	/* libuv refuses only when misused: counted as a failed save */
	s->saving = false;
	snprintf(s->err, sizeof(s->err), "%s: cannot start the save: %s",
		 s->path, uv_strerror(rc));
	save_failed(s);
	xd_snapdir_free(s->keys, s->nkeys);
	s->keys = NULL;
	s->nkeys = 0;
}

/* The snapshots of `source` load again: the saved state, if it was
 * served, no longer is. */
static void no_longer_refused(struct xd_laststate *s, const char *source)
{
	char when[32];

	if (!s->info.serving)
		return;
	xd_jw_time(when, s->info.served_saved_at_ms);
	xd_info("the snapshots of %s are accepted: no longer serving the last good state saved %s",
		source, when);
	s->info.serving = false;
	clear_errors(&s->info);
}

/* Saves `keys` (taken), now or after the save running. */
static void save(struct xd_laststate *s, struct xd_snapkey *keys, size_t n)
{
	if (s->saving) {
		/* the newest wins: one running, one waiting at most */
		xd_snapdir_free(s->next, s->nnext);
		s->next = keys;
		s->nnext = n;
		s->waiting = true;
	} else {
		s->keys = keys;
		s->nkeys = n;
		save_start(s);
	}
}

/* A good load of `source` is in use: its files (taken) are saved, or,
 * `hold`, held until its rollout is promoted. Either way a change held
 * before is superseded (the newest wins). */
static void in_use(struct xd_laststate *s, const char *source,
		   struct xd_load *load, bool hold)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(load->rc == 0 && load->keys != NULL,
		       "last good state of %s: a load that failed (%s)",
		       source, s->path);
	no_longer_refused(s, source);
	xd_snapdir_free(s->held, s->nheld);
	s->held = NULL;
	s->nheld = 0;
	if (hold) {
		s->held = load->keys;
		s->nheld = load->nkeys;
		xd_info("the last good state in %s is kept as it is until the staged change is promoted",
			s->path);
	} else {
		save(s, load->keys, load->nkeys);
	}
	load->keys = NULL; /* taken */
	load->nkeys = 0;
}

void xd_laststate_accepted(struct xd_laststate *s, const char *source,
			   struct xd_load *load)
{
	in_use(s, source, load, false);
}

void xd_laststate_held(struct xd_laststate *s, const char *source,
		       struct xd_load *load)
{
	in_use(s, source, load, true);
}

void xd_laststate_proven(struct xd_laststate *s, bool promoted)
{
	XD_ASSERT_LOOP();
	if (s->held == NULL)
		return;
	if (promoted) {
		save(s, s->held, s->nheld);
	} else {
		xd_info("the change rolled back is not saved: the last good state in %s stays the last one promoted",
			s->path);
		xd_snapdir_free(s->held, s->nheld);
	}
	s->held = NULL;
	s->nheld = 0;
}

const struct xd_laststate_info *xd_laststate_info(const struct xd_laststate *s)
{
	XD_ASSERT_LOOP();
	return &s->info;
}

bool xd_laststate_busy(const struct xd_laststate *s)
{
	return s->saving;
}

void xd_laststate_free(struct xd_laststate *s)
{
	if (s == NULL)
		return;
	XD_ASSERT_INFO(!s->saving, "last good state %s freed while saving",
		       s->path);
	xd_snapdir_free(s->next, s->nnext);
	xd_snapdir_free(s->held, s->nheld);
	clear_errors(&s->info);
	free(s->info.last_save_error);
	free(s->dir);
	free(s->path);
	free(s);
}
