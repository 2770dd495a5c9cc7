/* SPDX-License-Identifier: Apache-2.0 */
#include "util/diag.h"

#include <stdarg.h>
#include <stdlib.h>

#include "util/xalloc.h"

void xd_diag_add(struct xd_diag *d, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (d->count == XD_DIAG_MAX) {
		d->dropped++;
		return;
	}
	XD_ASSERT(d->count < XD_DIAG_MAX);
	va_start(ap, fmt);
	msg = xd_vasprintf(fmt, ap);
	va_end(ap);
	d->msgs[d->count++] = msg;
}

size_t xd_diag_total(const struct xd_diag *d)
{
	return d->count + d->dropped;
}

void xd_diag_append(struct xd_diag *d, struct xd_diag *from)
{
	for (size_t i = 0; i < from->count; i++) {
		if (d->count < XD_DIAG_MAX) {
			d->msgs[d->count++] = from->msgs[i];
		} else {
			free(from->msgs[i]);
			d->dropped++;
		}
	}
	d->dropped += from->dropped;
	from->count = 0;
	from->dropped = 0;
}

char **xd_diag_copy_first(const struct xd_diag *d, size_t max, size_t *n)
{
	char **v;

	*n = d->count < max ? d->count : max;
	v = xd_calloc(*n + 1, sizeof(char *));
	for (size_t i = 0; i < *n; i++)
		v[i] = xd_strdup(d->msgs[i]);
	return v;
}

void xd_diag_print(const struct xd_diag *d, FILE *out)
{
	for (size_t i = 0; i < d->count; i++)
		fprintf(out, "%s\n", d->msgs[i]);
	if (d->dropped > 0)
		fprintf(out, "(%zu more errors not shown)\n", d->dropped);
}

void xd_diag_clear(struct xd_diag *d)
{
	for (size_t i = 0; i < d->count; i++)
		free(d->msgs[i]);
	d->count = 0;
	d->dropped = 0;
}
