#include "util/address.h"

#include <arpa/inet.h>
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
