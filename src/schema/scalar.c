/* SPDX-License-Identifier: Apache-2.0 */
/* The text forms of scalars (scalar.h): numbers, booleans and YAML's
 * plain scalars; UTF-8; bytes as base64, Duration, Timestamp and
 * FieldMask, read and written side by side so that what the printer
 * writes reads back the same. */
#include "schema/scalar.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

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
	if (len >= sizeof(small))
		copy = xd_malloc(len + 1);
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

bool xd_scalar_utf8_valid(const char *str, size_t len)
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

double xd_scalar_float_shortest(float f)
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

/* ---- base64 ---- */

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int xd_scalar_base64_decode(const char *s, size_t len, struct xd_buf *out)
{
	size_t n = len, start = out->len;
	uint32_t acc = 0;
	unsigned bits = 0;
	uint8_t *p;

	/* Padding, when present, completes the last group of four. */
	if (n > 0 && s[n - 1] == '=') {
		if (len % 4 != 0)
			return -1;
		n--;
		if (n > 0 && s[n - 1] == '=')
			n--;
	}
	if (n % 4 == 1)
		return -1;
	p = xd_buf_reserve(out, n / 4 * 3 + 3);
	for (size_t i = 0; i < n; i++) {
		int v = b64_value(s[i]);

		if (v < 0) {
			out->len = start;
			return -1;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			*p++ = (uint8_t)(acc >> bits);
		}
	}
	out->len = (size_t)(p - out->data);
	return 0;
}

void xd_scalar_base64_encode(const uint8_t *p, size_t len,
			     struct xd_buf *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t *o = xd_buf_reserve(out, (len + 2) / 3 * 4);
	size_t i = 0;

	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
			     p[i + 2];

		*o++ = (uint8_t)abc[v >> 18];
		*o++ = (uint8_t)abc[(v >> 12) & 63];
		*o++ = (uint8_t)abc[(v >> 6) & 63];
		*o++ = (uint8_t)abc[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = (uint8_t)abc[v >> 18];
		*o++ = (uint8_t)abc[(v >> 12) & 63];
		*o++ = i + 1 < len ? (uint8_t)abc[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	out->len = (size_t)(o - out->data);
}

/* ---- Duration ---- */

/* Up to 9 fraction digits as nanoseconds; -1 when there are more or
 * none. */
static int32_t parse_nanos(const char *s, size_t n)
{
	int32_t v = 0;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < 9; i++)
		v = v * 10 + (i < n ? s[i] - '0' : 0);
	return v;
}

enum xd_num xd_scalar_duration_parse(const char *s, size_t len,
				     int64_t *seconds, int32_t *nanos)
{
	size_t i = 0, start;
	bool neg = false;
	int64_t secs = 0;
	int32_t ns = 0;

	if (len < 2 || s[len - 1] != 's')
		return XD_NUM_SYNTAX;
	len--;
	if (s[0] == '-') {
		neg = true;
		i++;
	}
	start = i;
	while (i < len && is_digit(s[i])) {
		if (secs > XD_DURATION_MAX_SECONDS)
			return XD_NUM_RANGE; /* keep going would overflow */
		secs = secs * 10 + (s[i] - '0');
		i++;
	}
	if (i == start)
		return XD_NUM_SYNTAX;
	if (i < len && s[i] == '.') {
		start = ++i;
		while (i < len && is_digit(s[i]))
			i++;
		ns = parse_nanos(s + start, i - start);
		if (ns < 0)
			return XD_NUM_SYNTAX;
	}
	if (i != len)
		return XD_NUM_SYNTAX;
	if (secs > XD_DURATION_MAX_SECONDS)
		return XD_NUM_RANGE;
	*seconds = neg ? -secs : secs;
	*nanos = neg ? -ns : ns;
	return XD_NUM_OK;
}

/* The fraction as protobuf prints it: 0, 3, 6 or 9 digits. */
static void format_nanos(int32_t ns, char buf[12])
{
	/* ns is in [0, 1e9): the digits always fit. */
	XD_ASSERT_INFO(ns >= 0 && ns < 1000000000, "%d ns", (int)ns);
	if (ns == 0)
		buf[0] = '\0';
	else if (ns % 1000000 == 0)
		snprintf(buf, 12, ".%03d", ns / 1000000 % 1000);
	else if (ns % 1000 == 0)
		snprintf(buf, 12, ".%06d", ns / 1000 % 1000000);
	else
		snprintf(buf, 12, ".%09d", ns % 1000000000);
}

int xd_scalar_duration_format(int64_t seconds, int32_t nanos, char *buf)
{
	char frac[12];

	if (seconds > XD_DURATION_MAX_SECONDS ||
	    seconds < -XD_DURATION_MAX_SECONDS || nanos <= -1000000000 ||
	    nanos >= 1000000000 || (seconds < 0 && nanos > 0) ||
	    (seconds > 0 && nanos < 0))
		return -1;
	format_nanos(nanos < 0 ? -nanos : nanos, frac);
	snprintf(buf, 32, "%s%lld%ss", seconds < 0 || nanos < 0 ? "-" : "",
		 (long long)(seconds < 0 ? -seconds : seconds), frac);
	return 0;
}

/* ---- Timestamp ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date. Eras of 400
 * years repeat exactly, which keeps the arithmetic exact. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool fixed_digits(const char *s, size_t n, unsigned *out)
{
	unsigned v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return true;
}

enum xd_num xd_scalar_timestamp_parse(const char *s, size_t len,
				      int64_t *seconds, int32_t *nanos)
{
	static const unsigned mdays[] = {31, 28, 31, 30, 31, 30,
					 31, 31, 30, 31, 30, 31};
	unsigned y, mo, d, h, mi, sec, oh = 0, om = 0, dim;
	size_t i = 19;
	int32_t ns = 0;
	int64_t t;
	int off_sign = 0;

	/* YYYY-MM-DDTHH:MM:SS */
	if (len < 20 || !fixed_digits(s, 4, &y) || s[4] != '-' ||
	    !fixed_digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !fixed_digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !fixed_digits(s + 11, 2, &h) || s[13] != ':' ||
	    !fixed_digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !fixed_digits(s + 17, 2, &sec))
		return XD_NUM_SYNTAX;
	if (s[i] == '.') {
		size_t start = ++i;

		while (i < len && is_digit(s[i]))
			i++;
		ns = parse_nanos(s + start, i - start);
		if (ns < 0)
			return XD_NUM_SYNTAX;
	}
	if (i + 1 == len && (s[i] == 'Z' || s[i] == 'z')) {
		off_sign = 0;
	} else if (i + 6 == len && (s[i] == '+' || s[i] == '-') &&
		   fixed_digits(s + i + 1, 2, &oh) && s[i + 3] == ':' &&
		   fixed_digits(s + i + 4, 2, &om) && oh <= 23 && om <= 59) {
		off_sign = s[i] == '+' ? 1 : -1;
	} else {
		return XD_NUM_SYNTAX;
	}
	if (y == 0 || mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59)
		return XD_NUM_SYNTAX;
	dim = mdays[mo - 1] +
	      (mo == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
	if (d < 1 || d > dim)
		return XD_NUM_SYNTAX;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	/* "+01:00" is one hour ahead of UTC. */
	t -= off_sign * (int64_t)(oh * 3600 + om * 60);
	if (t < XD_TIMESTAMP_MIN_SECONDS || t > XD_TIMESTAMP_MAX_SECONDS)
		return XD_NUM_RANGE;
	*seconds = t;
	*nanos = ns;
	return XD_NUM_OK;
}

int xd_scalar_timestamp_format(int64_t seconds, int32_t nanos, char *buf)
{
	int64_t days, y, rem;
	unsigned m, d;
	char frac[12];

	if (seconds < XD_TIMESTAMP_MIN_SECONDS ||
	    seconds > XD_TIMESTAMP_MAX_SECONDS || nanos < 0 ||
	    nanos >= 1000000000)
		return -1;
	days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
	rem = seconds - days * 86400;
	civil_from_days(days, &y, &m, &d);
	/* within the range checked above: a date of the years 1 to 9999 */
	XD_ASSERT_INFO(y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 &&
			       d <= 31 && rem >= 0 && rem < 86400,
		       "%lld s", (long long)seconds);
	format_nanos(nanos, frac);
	snprintf(buf, 48, "%04lld-%02u-%02uT%02d:%02d:%02d%sZ",
		 (long long)(y % 10000), m % 100, d % 100, (int)(rem / 3600) % 24,
		 (int)(rem / 60 % 60), (int)(rem % 60), frac);
	return 0;
}

/* ---- FieldMask ---- */

int xd_scalar_fieldmask_parse(const char *s, size_t len, struct xd_buf *out)
{
	size_t start = out->len;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '_' || c == '\0') {
			out->len = start;
			return -1;
		}
		if (c >= 'A' && c <= 'Z') {
			xd_buf_putc(out, '_');
			c = (char)(c - 'A' + 'a');
		}
		xd_buf_putc(out, (uint8_t)c);
	}
	return 0;
}

int xd_scalar_fieldmask_format(const char *s, size_t len, struct xd_buf *out)
{
	size_t start = out->len;
	bool under = false;

	/* Paths are joined with commas, empty ones are dropped when read
	 * and NULs refused: none would come back the same. */
	if (len == 0 || memchr(s, ',', len) != NULL ||
	    memchr(s, '\0', len) != NULL)
		return -1;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if ((c >= 'A' && c <= 'Z') || (under && !(c >= 'a' && c <= 'z')))
			goto bad;
		if (under) {
			xd_buf_putc(out, (uint8_t)(c - 'a' + 'A'));
			under = false;
		} else if (c == '_') {
			under = true;
		} else {
			xd_buf_putc(out, (uint8_t)c);
		}
	}
	if (!under)
		return 0;
bad:
	out->len = start;
	return -1;
}
