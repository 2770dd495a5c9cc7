/* SPDX-License-Identifier: Apache-2.0 */
#include "util/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/xalloc.h"

const char *xd_address_error(const char *s)
{
	const char *colon, *host_end;
	char *end;
	unsigned long port;

	if (strncmp(s, "unix:", 5) == 0)
		return s[5] != '\0' ? NULL : "unix: address without a path";
	if (s[0] == '[') {
		host_end = strchr(s, ']');
		if (host_end == NULL || host_end == s + 1)
			return "bad IPv6 address (form: [::1]:18000)";
		colon = host_end + 1;
		if (*colon != ':')
			return "missing :port after ]";
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return "missing :port (form: host:port)";
		if (colon == s)
			return "missing host (use 0.0.0.0:port for every address)";
		if (memchr(s, ':', (size_t)(colon - s)) != NULL)
			return "IPv6 addresses need brackets: [::]:18000";
	}
	if (colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5)
		return "port must be a number from 0 to 65535";
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port > 65535)
		return "port must be a number from 0 to 65535";
	return NULL;
}

int xd_address_split(const char *s, char *host, size_t host_cap, char *port,
		     size_t port_cap, char *why, size_t why_len)
{
	const char *bad = xd_address_error(s), *h = s, *colon;
	size_t hlen;

	if (bad == NULL && strncmp(s, "unix:", 5) == 0)
		bad = "a unix socket, where host:port is needed";
	if (bad != NULL) {
		snprintf(why, why_len, "'%s': %s", s, bad);
		return -1;
	}
	/* xd_address_error checked the form: [v6]:port or host:port */
	if (s[0] == '[') {
		h = s + 1;
		colon = strchr(s, ']') + 1;
		hlen = (size_t)(colon - 1 - h);
	} else {
		colon = strrchr(s, ':');
		hlen = (size_t)(colon - s);
	}
	if (hlen >= host_cap || strlen(colon + 1) >= port_cap) {
		snprintf(why, why_len, "'%s': host name too long", s);
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	memcpy(port, colon + 1, strlen(colon + 1) + 1);
	return 0;
}

int xd_address_resolve(const char *s, struct addrinfo **out, char *why,
		       size_t why_len)
{
	/* NI_MAXHOST: the longest name the resolver returns, so takes */
	char host[NI_MAXHOST], port[8];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE};
	int err;

	*out = NULL;
	if (xd_address_split(s, host, sizeof(host), port, sizeof(port), why,
			     why_len) != 0)
		return -1;
	err = getaddrinfo(host, port, &hints, out);
	if (err != 0) {
		snprintf(why, why_len, "cannot resolve '%s': %s", host,
			 gai_strerror(err));
		*out = NULL;
		return -1;
	}
	return 0;
}

int xd_address_format(const struct sockaddr *sa, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(out, cap, "%s:%u", host, ntohs(in->sin_port));
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host,
				  sizeof(host));
			snprintf(out, cap, "%s:%u", host, ntohs(in6->sin6_port));
			return AF_INET;
		}
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(out, cap, "[%s]:%u", host, ntohs(in6->sin6_port));
		return AF_INET6;
	}
	if (cap > 0)
		out[0] = '\0';
	return 0;
}

int xd_address_cidr_parse(const char *s, struct xd_cidr *out, char *why,
			  size_t why_len)
{
	/* the longest IPv6 text, a '/' and three digits */
	char text[INET6_ADDRSTRLEN + 4], *slash;
	unsigned max, bits;
	size_t len = strlen(s);

	memset(out, 0, sizeof(*out));
	if (len == 0 || len >= sizeof(text) || strchr(s, '[') != NULL) {
		snprintf(why, why_len,
			 len == 0 ? "'%s': empty; an address or prefix is needed (10.0.0.0/8, fd00::/8, 127.0.0.1)" :
			 strchr(s, '[') ? "'%s': not an address or prefix (no brackets, no port: fd00::/8, ::1)" :
					  "'%s': not an address or prefix (too long)",
			 s);
		return -1;
	}
	memcpy(text, s, len + 1);
	slash = strchr(text, '/');
	if (slash != NULL)
		*slash = '\0';
	if (inet_pton(AF_INET, text, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, text, out->addr) == 1)
		out->family = AF_INET6;
	else {
		snprintf(why, why_len, "'%s': %s", s,
			 strchr(text, ':') != NULL && strchr(text, '.') != NULL &&
					 strchr(text, ':') == strrchr(text, ':') ?
				 "not an address or prefix (no port: 10.0.0.7, 10.0.0.0/8)" :
				 "not an IPv4 or IPv6 address or prefix (host names are not resolved)");
		return -1;
	}
	max = out->family == AF_INET ? 32 : 128;
	bits = max;
	if (slash != NULL) {
		const char *p = slash + 1;

		if (*p == '\0' || strspn(p, "0123456789") != strlen(p) ||
		    strlen(p) > 3 || (bits = (unsigned)atoi(p)) > max) {
			snprintf(why, why_len, "'%s': the prefix length must be a number from 0 to %u",
				 s, max);
			return -1;
		}
	}
	for (unsigned b = bits; b < max; b++) {
		if (out->addr[b / 8] & (0x80u >> (b % 8))) {
			char net[INET6_ADDRSTRLEN];

			for (; b < max; b++)
				out->addr[b / 8] &= (unsigned char)~(0x80u >> (b % 8));
			inet_ntop(out->family, out->addr, net, sizeof(net));
			snprintf(why, why_len, "'%s': bits set after the /%u prefix (%s/%u?)",
				 s, bits, net, bits);
			return -1;
		}
	}
	out->bits = bits;
	if (out->family == AF_INET6 && bits >= 96 &&
	    IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(void *)out->addr)) {
		memmove(out->addr, out->addr + 12, 4);
		memset(out->addr + 4, 0, 12);
		out->family = AF_INET;
		out->bits = bits - 96;
	}
	return 0;
}

/* `sa` as a family and its address bytes; an IPv4-mapped IPv6 address
 * as IPv4. 0 for other families. */
static int address_bytes(const struct sockaddr *sa, unsigned char bytes[16])
{
	if (sa->sa_family == AF_INET) {
		memcpy(bytes, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(bytes, &a->s6_addr[12], 4);
			return AF_INET;
		}
		memcpy(bytes, a->s6_addr, 16);
		return AF_INET6;
	}
	return 0;
}

bool xd_address_in(const struct xd_cidr *list, size_t n,
		   const struct sockaddr *sa)
{
	unsigned char bytes[16];
	int family = address_bytes(sa, bytes);

	for (size_t i = 0; family != 0 && i < n; i++) {
		unsigned whole = list[i].bits / 8, rest = list[i].bits % 8;

		if (list[i].family != family ||
		    memcmp(list[i].addr, bytes, whole) != 0)
			continue;
		if (rest == 0 ||
		    ((list[i].addr[whole] ^ bytes[whole]) & (0xffu << (8 - rest)) & 0xffu) == 0)
			return true;
	}
	return false;
}

bool xd_address_from_peer(const char *peer, struct sockaddr_storage *out)
{
	/* "[" host "]:" port, brackets maybe as %5B and %5D */
	char text[INET6_ADDRSTRLEN + 16], host[INET6_ADDRSTRLEN], port[8], why[8];
	const char *p;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (strncmp(peer, "ipv4:", 5) != 0 && strncmp(peer, "ipv6:", 5) != 0)
		return false;
	for (p = peer + 5; *p != '\0' && n + 1 < sizeof(text); p++) {
		if (p[0] == '%' && p[1] == '5' && strchr("bBdD", p[2]) != NULL) {
			text[n++] = strchr("bB", p[2]) != NULL ? '[' : ']';
			p += 2;
		} else {
			text[n++] = *p;
		}
	}
	text[n] = '\0';
	if (*p != '\0' || xd_address_split(text, host, sizeof(host), port,
					   sizeof(port), why, sizeof(why)) != 0)
		return false;
	if (peer[3] == '4') {
		struct sockaddr_in *in = (struct sockaddr_in *)(void *)out;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)atoi(port));
		return inet_pton(AF_INET, host, &in->sin_addr) == 1;
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)out;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1;
}

/* Whether `sa` lies in one of `n` prefixes written as constants. */
static bool in_ranges(const struct sockaddr *sa, const char *const *ranges,
		      size_t n)
{
	struct xd_cidr c;
	char why[8];

	for (size_t i = 0; i < n; i++) {
		int rc = xd_address_cidr_parse(ranges[i], &c, why, sizeof(why));

		XD_ASSERT(rc == 0); /* constants: they parse */
		if (xd_address_in(&c, 1, sa))
			return true;
	}
	return false;
}

bool xd_address_is_loopback(const struct sockaddr *sa)
{
	static const char *const ranges[] = {"127.0.0.0/8", "::1"};

	return in_ranges(sa, ranges, sizeof(ranges) / sizeof(ranges[0]));
}

bool xd_address_is_private(const struct sockaddr *sa)
{
	static const char *const ranges[] = {
		"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
		"100.64.0.0/10", "169.254.0.0/16", "fc00::/7", "fe80::/10",
	};

	return xd_address_is_loopback(sa) ||
	       in_ranges(sa, ranges, sizeof(ranges) / sizeof(ranges[0]));
}
