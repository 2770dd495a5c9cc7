/* The text forms of bytes and of the well-known types Duration,
 * Timestamp and FieldMask, both ways (scalar.h). */
#include "schema/scalar.h"

#include <stdio.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
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

int xd_base64_decode(const char *s, size_t len, struct xd_buf *out)
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

void xd_base64_encode(const uint8_t *p, size_t len, struct xd_buf *out)
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

enum xd_num xd_duration_parse(const char *s, size_t len, int64_t *seconds,
			      int32_t *nanos)
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
	if (ns == 0)
		buf[0] = '\0';
	else if (ns % 1000000 == 0)
		snprintf(buf, 12, ".%03d", ns / 1000000 % 1000);
	else if (ns % 1000 == 0)
		snprintf(buf, 12, ".%06d", ns / 1000 % 1000000);
	else
		snprintf(buf, 12, ".%09d", ns % 1000000000);
}

int xd_duration_format(int64_t seconds, int32_t nanos, char *buf)
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

enum xd_num xd_timestamp_parse(const char *s, size_t len, int64_t *seconds,
			       int32_t *nanos)
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

int xd_timestamp_format(int64_t seconds, int32_t nanos, char *buf)
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
	format_nanos(nanos, frac);
	snprintf(buf, 48, "%04lld-%02u-%02uT%02d:%02d:%02d%sZ",
		 (long long)(y % 10000), m % 100, d % 100, (int)(rem / 3600) % 24,
		 (int)(rem / 60 % 60), (int)(rem % 60), frac);
	return 0;
}

/* ---- FieldMask ---- */

int xd_fieldmask_path_parse(const char *s, size_t len, struct xd_buf *out)
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

int xd_fieldmask_path_format(const char *s, size_t len, struct xd_buf *out)
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
