#include "util/address.h"

#include <stdlib.h>
#include <string.h>

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
