/* SPDX-License-Identifier: Apache-2.0 */
#include "util/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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
