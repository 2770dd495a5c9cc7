/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fuzz target without libFuzzer (linked with fuzz_http.c for the HTTP
 * endpoints, with fuzz_request.c for the streams' requests): runs each
 * input named on the command line (files, or directories of them, in
 * name order) once, as a TAP test each. `make check` replays the seeds
 * and the committed regression inputs with it; a failed invariant
 * aborts, which fails the run.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char **inputs;
static size_t ninputs, cap;

static void add(const char *path)
{
	if (ninputs == cap) {
		cap = cap ? cap * 2 : 64;
		inputs = realloc(inputs, cap * sizeof(*inputs));
		if (inputs == NULL)
			abort();
	}
	inputs[ninputs++] = strdup(path);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or the files of a directory (not hidden, not nested). */
static int collect(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	size_t first = ninputs;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "http-replay: %s: cannot read\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		add(path);
		return 0;
	}
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char full[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
		add(full);
	}
	closedir(d);
	qsort(inputs + first, ninputs - first, sizeof(*inputs), by_name);
	return 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t n = 0, got;
	uint8_t chunk[65536];

	if (f == NULL)
		return NULL;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		data = realloc(data, n + got);
		if (data == NULL)
			abort();
		memcpy(data + n, chunk, got);
		n += got;
	}
	fclose(f);
	*len = n;
	return data != NULL ? data : malloc(1);
}

int main(int argc, char **argv)
{
	int failed = 0;

	for (int i = 1; i < argc; i++)
		if (collect(argv[i]) != 0)
			return 1;
	if (ninputs == 0) {
		fprintf(stderr, "usage: http-replay FILE|DIR...\n");
		return 1;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	printf("1..%zu\n", ninputs);
	fflush(stdout);
	for (size_t i = 0; i < ninputs; i++) {
		size_t len = 0;
		uint8_t *data = slurp(inputs[i], &len);

		if (data == NULL) {
			printf("not ok %zu - %s: cannot read\n", i + 1, inputs[i]);
			failed = 1;
		} else {
			LLVMFuzzerTestOneInput(data, len);
			printf("ok %zu - %s (%zu bytes)\n", i + 1, inputs[i], len);
		}
		fflush(stdout);
		free(data);
		free(inputs[i]);
	}
	free(inputs);
	return failed;
}
