/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/file.h"
#include "util/text.h"
#include "util/xalloc.h"

struct xd_snapbytes {
	atomic_uint refs;
	char text[]; /* NUL-terminated */
};

/* Room for `len` bytes and their NUL, one reference. */
static struct xd_snapbytes *bytes_new(size_t len)
{
	struct xd_snapbytes *b = xd_malloc(sizeof(*b) + len + 1);

	atomic_init(&b->refs, 1);
	return b;
}

struct xd_snapbytes *xd_snapbytes_new(const void *data, size_t len)
{
	struct xd_snapbytes *b = bytes_new(len);

	memcpy(b->text, data, len);
	b->text[len] = '\0';
	return b;
}

const char *xd_snapbytes_text(const struct xd_snapbytes *b)
{
	return b->text;
}

struct xd_snapbytes *xd_snapbytes_ref(struct xd_snapbytes *b)
{
	unsigned old = atomic_fetch_add_explicit(&b->refs, 1,
						 memory_order_relaxed);

	/* bytes at 0 are being freed: no reference can be taken */
	XD_ASSERT_INFO(old > 0, "file bytes at %p", (void *)b);
	return b;
}

void xd_snapbytes_unref(struct xd_snapbytes *b)
{
	unsigned old;

	if (b == NULL)
		return;
	old = atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel);
	/* XD_UNREF's check, atomically: a save drops them on its thread */
	XD_ASSERT_INFO(old > 0, "reference dropped below zero: file bytes at %p",
		       (void *)b);
	if (old == 1)
		free(b);
}

/* The files an earlier read found (files.h), if told. */
struct known {
	xd_snapdir_known_fn fn; /* NULL: none */
	void *arg;
};

static int64_t ns_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct xd_snapstat snapstat_of(const struct stat *st, int64_t read_ns)
{
	return (struct xd_snapstat){
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = ns_of(st->st_mtim),
		.ctime_ns = ns_of(st->st_ctim),
		.read_ns = read_ns,
	};
}

/*
 * Stat says the file read as `was` is `now`, and can be trusted to:
 * neither of its times was within XD_SNAPSHOT_RACY_NS of the read (or
 * after it), so a change since would have moved the ctime at least.
 */
static bool unchanged(const struct xd_snapstat *was,
		      const struct xd_snapstat *now)
{
	int64_t settled = was->read_ns - XD_SNAPSHOT_RACY_NS;

	return was->read_ns != 0 && was->mtime_ns < settled &&
	       was->ctime_ns < settled && now->dev == was->dev &&
	       now->ino == was->ino && now->size == was->size &&
	       now->mtime_ns == was->mtime_ns &&
	       now->ctime_ns == was->ctime_ns;
}

static int ext_len(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ? 5 :
	       (n > 4 && strcmp(name + n - 4, ".yml") == 0)  ? 4 :
	       (n > 5 && strcmp(name + n - 5, ".json") == 0) ? 5 : 0;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * What one read of the directory went through: the directory, the key
 * directories and the files, each as the path it was reached by and
 * the inode found there. A symlink swapped while they were read (a
 * release link re-pointed, a ConfigMap's ..data renamed over) leads one
 * of these paths elsewhere afterwards, and the read may hold files of
 * two versions: it is done again. One entry per directory and file
 * read, so bounded as they are.
 */
struct seen {
	char *path;
	dev_t dev;
	ino_t ino;
};

struct seen_list {
	struct seen *v;
	size_t n, cap;
};

static void seen_add(struct seen_list *l, const char *path,
		     const struct stat *st)
{
	l->v = xd_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n].path = xd_strdup(path);
	l->v[l->n].dev = st->st_dev;
	l->v[l->n].ino = st->st_ino;
	l->n++;
}

/* Every path still leads where it did. */
static bool seen_same(const struct seen_list *l)
{
	struct stat st;

	for (size_t i = 0; i < l->n; i++)
		if (stat(l->v[i].path, &st) != 0 || st.st_dev != l->v[i].dev ||
		    st.st_ino != l->v[i].ino)
			return false;
	return true;
}

static void seen_free(struct seen_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Sorted names of the entries of `dir`, hidden ones skipped. */
static char **read_names(const char *dir, size_t *n, int *err,
			 struct seen_list *seen)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cap = 0;
	struct stat st;

	*n = 0;
	*err = 0;
	if (d == NULL) {
		*err = errno;
		return NULL;
	}
	if (fstat(dirfd(d), &st) == 0)
		seen_add(seen, dir, &st);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		v = xd_grow(v, &cap, *n + 1, sizeof(*v));
		v[(*n)++] = xd_strdup(e->d_name);
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), by_str);
	return v;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char *join(const char *a, const char *b)
{
	return xd_asprintf("%s/%s", a, b);
}

/* Nothing but blanks and comments. */
static bool blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
		} else if (text[i] != ' ' && text[i] != '\t' &&
			   text[i] != '\n' && text[i] != '\r') {
			return false;
		}
	}
	return true;
}

/* `f` as an earlier read found it, when stat finds it unchanged since:
 * its bytes shared, the file not opened. */
static bool take_unchanged(struct xd_snapfile *f, const struct known *known,
			   struct seen_list *seen)
{
	struct xd_snapbytes *b;
	struct xd_snapstat was, now;
	struct stat st;

	if (known->fn == NULL ||
	    !known->fn(known->arg, f->path, f->json, &was, &b) ||
	    stat(f->path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	now = snapstat_of(&st, 0);
	if (!unchanged(&was, &now))
		return false;
	XD_ASSERT_INFO(b != NULL && was.size <= XD_SNAPSHOT_MAX_FILE,
		       "%s: known without its bytes", f->path);
	seen_add(seen, f->path, &st);
	f->bytes = xd_snapbytes_ref(b);
	f->text = b->text;
	f->len = (size_t)was.size;
	f->st = was; /* the bytes are of that read */
	f->unchanged = true;
	return true;
}

/* The bytes of `f` read, and what stat said of them. */
static int read_bytes(struct xd_snapfile *f, struct xd_diag *diag,
		      struct seen_list *seen)
{
	struct timespec before;
	struct stat st;
	int fd;

	/* taken first: whatever changes the file from here on gives it a
	 * time after this one (unchanged()) */
	clock_gettime(CLOCK_REALTIME, &before);
	/* a FIFO or a device where the file was (at the scan, or swapped
	 * in since) is refused without blocking the load (util/file.h) */
	fd = xd_file_open(f->path, "snapshot file", XD_SNAPSHOT_MAX_FILE, &st,
			  NULL, diag);
	if (fd < 0)
		return -1;
	seen_add(seen, f->path, &st);
	f->bytes = bytes_new((size_t)st.st_size);
	f->text = f->bytes->text;
	if (xd_file_read_fd(fd, f->path, "snapshot file", f->text,
			    (size_t)st.st_size, diag) != 0) {
		close(fd);
		return -1;
	}
	close(fd);
	f->len = (size_t)st.st_size;
	XD_ASSERT(f->len <= XD_SNAPSHOT_MAX_FILE); /* xd_file_open's bound */
	f->text[f->len] = '\0';
	f->st = snapstat_of(&st, ns_of(before));
	return 0;
}

static int read_file(struct xd_snapfile *f, const struct known *known,
		     struct xd_diag *diag, struct seen_list *seen)
{
	if (!take_unchanged(f, known, seen) &&
	    read_bytes(f, diag, seen) != 0)
		return -1;
	if (blank(f->text, f->len)) {
		xd_diag_add(diag, "%s: the file is empty (a snapshot with no resources is written {})",
			    f->path);
		return -1;
	}
	return 0;
}

/*
 * The keys of one read, in the order they are found, and an index of
 * them by name (open addressing, at most half full): whether a key is
 * defined twice is one probe, not a pass over every key found before
 * it, so a read costs what it holds (a prefix of 50,000 keys).
 */
struct found {
	struct xd_snapkey *v;
	size_t n, cap;
	size_t *slots; /* an index in v + 1; 0: empty */
	size_t mask;   /* the number of slots - 1 (a power of two) */
};

static size_t *found_slot(const struct found *fd, const char *key)
{
	size_t i = xd_text_hash(key, strlen(key)) & fd->mask;

	while (fd->slots[i] != 0 && strcmp(fd->v[fd->slots[i] - 1].key, key) != 0)
		i = (i + 1) & fd->mask;
	return &fd->slots[i];
}

/* Twice the slots, every key placed again. */
static void found_rehash(struct found *fd)
{
	size_t size = fd->slots == NULL ? 64 : (fd->mask + 1) * 2;

	free(fd->slots);
	fd->slots = xd_calloc(size, sizeof(*fd->slots));
	fd->mask = size - 1;
	for (size_t i = 0; i < fd->n; i++)
		*found_slot(fd, fd->v[i].key) = i + 1;
}

/* The keys found (the caller's), the index freed. */
static void found_done(struct found *fd, struct xd_snapkey **keys, size_t *n)
{
	free(fd->slots);
	*keys = fd->v;
	*n = fd->n;
	memset(fd, 0, sizeof(*fd));
}

/* A new key, or NULL when it is defined already (said in `diag`, with
 * `what` defining it again). The pointer lasts until the next call. */
static struct xd_snapkey *add_key(struct found *fd, const char *key,
				  const char *what, struct xd_diag *diag)
{
	struct xd_snapkey *k;
	size_t *slot;

	if ((fd->n + 1) * 2 > fd->mask + 1 || fd->slots == NULL)
		found_rehash(fd);
	slot = found_slot(fd, key);
	if (*slot != 0) {
		k = &fd->v[*slot - 1];
		xd_diag_add(diag, "%s: snapshot '%s' is also defined by %s",
			    k->nfiles ? k->files[0].path : key, key, what);
		return NULL;
	}
	fd->v = xd_grow(fd->v, &fd->cap, fd->n + 1, sizeof(*fd->v));
	k = &fd->v[fd->n++];
	memset(k, 0, sizeof(*k));
	k->key = xd_strdup(key);
	*slot = fd->n;
	return k;
}

static void add_file(struct xd_snapkey *k, char *path)
{
	struct xd_snapfile *f;
	size_t n = strlen(path);

	k->files = xd_realloc(k->files, (k->nfiles + 1) * sizeof(*k->files));
	f = &k->files[k->nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->json = n > 5 && strcmp(path + n - 5, ".json") == 0;
}

/* One read of `dir`: what xd_snapdir_read does, the paths it went
 * through in `seen`. */
static int read_once(const char *dir, const struct known *known,
		     struct xd_snapkey **keys, size_t *nkeys,
		     struct xd_diag *diag, struct seen_list *seen)
{
	size_t n, before = xd_diag_total(diag);
	int err;
	char **names = read_names(dir, &n, &err, seen);
	struct found fd = {0};

	*keys = NULL;
	*nkeys = 0;
	if (err != 0) {
		xd_diag_add(diag, "%s: cannot read the snapshot directory: %s",
			    dir, strerror(err));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char *path = join(dir, names[i]);
		int ext = ext_len(names[i]);
		struct xd_snapkey *k;
		struct stat st;

		if (stat(path, &st) != 0) {
			xd_diag_add(diag, "%s: %s", path, strerror(errno));
			free(path);
		} else if (S_ISDIR(st.st_mode)) {
			size_t m;
			char **inner = read_names(path, &m, &err, seen);

			if (err != 0) {
				xd_diag_add(diag, "%s: %s", path, strerror(err));
			} else if ((k = add_key(&fd, names[i], path, diag)) != NULL) {
				for (size_t j = 0; j < m; j++)
					if (ext_len(inner[j]))
						add_file(k, join(path, inner[j]));
			}
			free_names(inner, m);
			free(path);
		} else if (ext != 0) {
			/* a FIFO or a device named as a snapshot is one,
			 * refused when read (util/file.h), not passed over */
			char *key = xd_strndup(names[i], strlen(names[i]) - (size_t)ext);

			if ((k = add_key(&fd, key, path, diag)) != NULL)
				add_file(k, path);
			else
				free(path);
			free(key);
		} else {
			free(path); /* not a snapshot: READMEs and the like */
		}
	}
	free_names(names, n);
	found_done(&fd, keys, nkeys);
	for (size_t i = 0; i < *nkeys; i++)
		for (size_t j = 0; j < (*keys)[i].nfiles; j++)
			read_file(&(*keys)[i].files[j], known, diag, seen);
	return xd_diag_total(diag) == before ? 0 : -1;
}

int xd_snapdir_read(const char *dir, xd_snapdir_known_fn known_fn,
		    void *arg, struct xd_snapkey **keys, size_t *nkeys,
		    struct xd_diag *diag)
{
	const struct known known = {known_fn, arg};

	for (int attempt = 1;; attempt++) {
		struct xd_diag mine = XD_DIAG_INIT;
		struct seen_list seen = {0};
		int rc = read_once(dir, &known, keys, nkeys, &mine, &seen);
		bool same = seen_same(&seen);

		seen_free(&seen);
		if (same || attempt == XD_SNAPSHOT_READ_TRIES) {
			xd_diag_append(diag, &mine);
			if (same)
				return rc;
			xd_diag_add(diag, "%s: the files changed while they were read, %d times in a row (a symlink swapped again and again?)",
				    dir, attempt);
			return -1;
		}
		xd_diag_clear(&mine);
		xd_snapdir_free(*keys, *nkeys);
	}
}

/* One text as a file of `k`: its bytes shared when it has them, else
 * copied; refused when too large, as read_bytes refuses a file, or blank,
 * as read_file refuses an empty one. */
static void add_text(struct xd_snapkey *k, const struct xd_snaptext *t,
		     struct xd_diag *diag)
{
	struct xd_snapfile *f;

	add_file(k, xd_strdup(t->path));
	f = &k->files[k->nfiles - 1];
	if (t->len > XD_SNAPSHOT_MAX_FILE) {
		xd_diag_add(diag, "%s: %zu bytes: larger than the limit of %u MiB",
			    f->path, t->len, XD_SNAPSHOT_MAX_FILE >> 20);
		f->text = xd_strdup("");
		return;
	}
	if (t->bytes != NULL) {
		f->bytes = xd_snapbytes_ref(t->bytes);
		f->text = t->bytes->text;
	} else {
		f->text = xd_malloc(t->len + 1);
		memcpy(f->text, t->text, t->len);
		f->text[t->len] = '\0';
	}
	f->len = t->len;
	if (blank(f->text, f->len))
		xd_diag_add(diag, "%s: the value is empty (a snapshot with no resources is written {})",
			    f->path);
}

bool xd_snapshot_name_counts(const char *name)
{
	const char *slash = strchr(name, '/');
	const char *base = slash != NULL ? slash + 1 : name;

	/* what a directory read skips: hidden entries, other files,
	 * anything deeper than one folder */
	return name[0] != '.' && base[0] != '.' && ext_len(base) != 0 &&
	       strchr(base, '/') == NULL && slash != name;
}

int xd_snapkeys_from_texts(const struct xd_snaptext *texts, size_t n,
			   struct xd_snapkey **keys, size_t *nkeys,
			   struct xd_diag *diag)
{
	size_t before = xd_diag_total(diag);
	struct xd_snapkey *folder = NULL; /* the last "<key>/" seen */
	struct found fd = {0};

	for (size_t i = 0; i < n; i++) {
		const char *name = texts[i].name, *slash = strchr(name, '/');
		const char *base = slash != NULL ? slash + 1 : name;
		struct xd_snapkey *k;
		char *key;

		XD_ASSERT_INFO(i == 0 || strcmp(texts[i - 1].name, name) < 0,
			       "snapshot texts out of order at '%s'", name);
		if (!xd_snapshot_name_counts(name))
			continue;
		if (slash == NULL) {
			key = xd_strndup(name, strlen(name) - (size_t)ext_len(base));
			k = add_key(&fd, key, texts[i].path, diag);
			folder = NULL;
		} else {
			key = xd_strndup(name, (size_t)(slash - name));
			/* add_key may move the array: find the folder anew */
			k = folder != NULL && strcmp(folder->key, key) == 0 ?
				    folder :
				    add_key(&fd, key, texts[i].path, diag);
			folder = k;
		}
		if (k != NULL)
			add_text(k, &texts[i], diag);
		free(key);
	}
	found_done(&fd, keys, nkeys);
	return xd_diag_total(diag) == before ? 0 : -1;
}

void xd_snapdir_free(struct xd_snapkey *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < keys[i].nfiles; j++) {
			struct xd_snapfile *f = &keys[i].files[j];

			free(f->path);
			if (f->bytes != NULL)
				xd_snapbytes_unref(f->bytes);
			else
				free(f->text);
		}
		free(keys[i].files);
		free(keys[i].key);
	}
	free(keys);
}
