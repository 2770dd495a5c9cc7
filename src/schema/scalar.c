#include "schema/scalar.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The parts of a decimal number: [sign] int [. frac] [e exp]. */
struct decimal {
	bool neg;
	const char *ip, *fp; /* integer and fraction digits */
	size_t ni, nf;
	long exp; /* clamped to +-100000: beyond that only the sign matters */
};

static bool scan_decimal(const char *s, size_t len, struct decimal *d)
{
	size_t i = 0;

	memset(d, 0, sizeof(*d));
	if (i < len && (s[i] == '-' || s[i] == '+'))
		d->neg = s[i++] == '-';
	d->ip = s + i;
	while (i < len && is_digit(s[i]))
		i++;
	d->ni = (size_t)(s + i - d->ip);
	if (i < len && s[i] == '.') {
		d->fp = s + ++i;
		while (i < len && is_digit(s[i]))
			i++;
		d->nf = (size_t)(s + i - d->fp);
	}
	if (d->ni + d->nf == 0)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;
		size_t start;

		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		start = i;
		while (i < len && is_digit(s[i])) {
			if (d->exp < 100000)
				d->exp = d->exp * 10 + (s[i] - '0');
			i++;
		}
		if (i == start)
			return false;
		if (eneg)
			d->exp = -d->exp;
	}
	return i == len;
}

/* The digit at position k of int digits followed by fraction digits. */
static char digit_at(const struct decimal *d, size_t k)
{
	return k < d->ni ? d->ip[k] : d->fp[k - d->ni];
}

/* The magnitude of an integral decimal, exactly. */
static enum xd_num integral(const struct decimal *d, uint64_t *mag)
{
	size_t total = d->ni + d->nf, first = total, last = 0;
	long e;
	uint64_t v = 0;

	for (size_t k = 0; k < total; k++)
		if (digit_at(d, k) != '0') {
			if (first == total)
				first = k;
			last = k;
		}
	if (first == total) {
		*mag = 0;
		return XD_NUM_OK;
	}
	/* value = digits[first..last] * 10^e */
	e = d->exp - (long)d->nf + (long)(total - 1 - last);
	if (e < 0)
		return XD_NUM_FRACTION;
	if ((long)(last - first + 1) + e > 20)
		return XD_NUM_RANGE;
	for (size_t k = first; k <= last; k++) {
		uint64_t c = (uint64_t)(digit_at(d, k) - '0');

		if (v > (UINT64_MAX - c) / 10)
			return XD_NUM_RANGE;
		v = v * 10 + c;
	}
	for (; e > 0; e--) {
		if (v > UINT64_MAX / 10)
			return XD_NUM_RANGE;
		v *= 10;
	}
	*mag = v;
	return XD_NUM_OK;
}

enum xd_num xd_scalar_int(const char *s, size_t len, int64_t min, int64_t max,
			  int64_t *out)
{
	struct decimal d;
	uint64_t mag;
	enum xd_num r;

	if (!scan_decimal(s, len, &d))
		return XD_NUM_SYNTAX;
	r = integral(&d, &mag);
	if (r != XD_NUM_OK)
		return r;
	if (d.neg && mag != 0) {
		/* -(min) as an unsigned magnitude, without overflow. */
		if (min >= 0 || mag - 1 > (uint64_t)(-(min + 1)))
			return XD_NUM_RANGE;
		*out = (int64_t)(0 - mag);
		return XD_NUM_OK;
	}
	if (mag > (uint64_t)max)
		return XD_NUM_RANGE;
	*out = (int64_t)mag;
	return XD_NUM_OK;
}

enum xd_num xd_scalar_uint(const char *s, size_t len, uint64_t max,
			   uint64_t *out)
{
	struct decimal d;
	uint64_t mag;
	enum xd_num r;

	if (!scan_decimal(s, len, &d))
		return XD_NUM_SYNTAX;
	r = integral(&d, &mag);
	if (r != XD_NUM_OK)
		return r;
	if ((d.neg && mag != 0) || mag > max)
		return XD_NUM_RANGE;
	*out = mag;
	return XD_NUM_OK;
}

static bool word_is(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && memcmp(s, w, len) == 0;
}

/* "word", "Word" and "WORD", as YAML writes its constants. */
static bool word_any_case(const char *s, size_t len, const char *lower)
{
	char cap[16], up[16];
	size_t n = strlen(lower);

	if (n != len || n >= sizeof(cap))
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = lower[i];

		up[i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
		cap[i] = i == 0 || (i == 1 && lower[0] == '.') ? up[i] : c;
	}
	return memcmp(s, lower, n) == 0 || memcmp(s, cap, n) == 0 ||
	       memcmp(s, up, n) == 0;
}

enum xd_num xd_scalar_double(const char *s, size_t len, double *out)
{
	struct decimal d;
	char small[64], *copy = small;
	double v;

	if (word_is(s, len, "NaN") || word_any_case(s, len, ".nan")) {
		*out = NAN;
		return XD_NUM_OK;
	}
	if (word_is(s, len, "Infinity") || word_any_case(s, len, ".inf") ||
	    (len > 0 && s[0] == '+' && word_any_case(s + 1, len - 1, ".inf"))) {
		*out = INFINITY;
		return XD_NUM_OK;
	}
	if (word_is(s, len, "-Infinity") ||
	    (len > 0 && s[0] == '-' && word_any_case(s + 1, len - 1, ".inf"))) {
		*out = -INFINITY;
		return XD_NUM_OK;
	}
	if (!scan_decimal(s, len, &d))
		return XD_NUM_SYNTAX;
	/* strtod needs a terminated copy; the grammar is already checked,
	 * so it reads exactly these bytes. */
	if (len >= sizeof(small)) {
		copy = malloc(len + 1);
		if (copy == NULL)
			abort();
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	errno = 0;
	v = strtod(copy, NULL);
	if (copy != small)
		free(copy);
	if (isinf(v))
		return XD_NUM_RANGE;
	*out = v;
	return XD_NUM_OK;
}

int xd_scalar_bool(const char *s, size_t len, bool *out)
{
	if (word_any_case(s, len, "true")) {
		*out = true;
		return 0;
	}
	if (word_any_case(s, len, "false")) {
		*out = false;
		return 0;
	}
	return -1;
}

enum xd_plain xd_scalar_plain(const char *s, size_t len, bool *b, double *d)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};

	/* YAML 1.1's booleans, as PyYAML and Envoy's loader read them. */
	for (size_t i = 0; i < 3; i++) {
		if (word_any_case(s, len, yes[i])) {
			*b = true;
			return XD_PLAIN_BOOL;
		}
		if (word_any_case(s, len, no[i])) {
			*b = false;
			return XD_PLAIN_BOOL;
		}
	}
	if (len > 0 && !word_is(s, len, "NaN") && !word_is(s, len, "Infinity") &&
	    !word_is(s, len, "-Infinity") &&
	    xd_scalar_double(s, len, d) == XD_NUM_OK)
		return XD_PLAIN_NUMBER;
	return XD_PLAIN_STRING;
}

/* ---- UTF-8 ---- */

bool xd_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates, beyond U+10FFFF. */
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		i += n + 1;
	}
	return true;
}

double xd_float_shortest(float f)
{
	char buf[32];

	if (!isfinite(f))
		return (double)f;
	for (int p = 1; p <= 9; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, (double)f);
		/* Read back as this transcoder does: a double, then a
		 * float (so double rounding cannot change it). */
		if ((float)strtod(buf, NULL) == f) {
			double d = strtod(buf, NULL);

			/* Near FLT_MAX the short form exceeds FLT_MAX as a
			 * double, which some readers refuse. */
			return fabs(d) > FLT_MAX ? (double)f : d;
		}
	}
	return (double)f;
}
