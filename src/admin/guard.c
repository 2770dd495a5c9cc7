/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/guard.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Longest host name kept for the comparisons (DNS allows 253). */
#define HOST_MAX 256

/* The host part of "host", "host:port", "[v6]" or "[v6]:port" into
 * `out`; false when it is not one of those or too long. */
static bool host_part(const char *s, char *out, size_t cap)
{
	size_t n;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (end == NULL || (end[1] != '\0' && end[1] != ':'))
			return false;
		n = (size_t)(end - s - 1);
		s++;
	} else {
		const char *colon = strchr(s, ':');

		n = colon != NULL ? (size_t)(colon - s) : strlen(s);
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			return false;
	}
	if (n == 0 || n >= cap)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static bool is_address(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 ||
	       inet_pton(AF_INET6, host, buf) == 1;
}

/* Whether `host` is the machine's name, or the first label of it. */
static bool machine_name(const char *hostname, const char *host)
{
	const char *dot;

	if (hostname == NULL || hostname[0] == '\0')
		return false;
	if (strcasecmp(host, hostname) == 0)
		return true;
	dot = strchr(hostname, '.');
	return dot != NULL && strlen(host) == (size_t)(dot - hostname) &&
	       strncasecmp(host, hostname, (size_t)(dot - hostname)) == 0;
}

/* Whether `host` (no port) names this endpoint. */
static bool own_host(const struct xd_config *cfg, const char *hostname,
		     const char *host)
{
	char listen_host[HOST_MAX];

	if (is_address(host) || strcasecmp(host, "localhost") == 0 ||
	    machine_name(hostname, host))
		return true;
	for (size_t i = 0; i < cfg->nadmin_hosts; i++)
		if (strcasecmp(host, cfg->admin_hosts[i]) == 0)
			return true;
	return cfg->admin_listen != NULL &&
	       strncmp(cfg->admin_listen, "unix:", 5) != 0 &&
	       host_part(cfg->admin_listen, listen_host, sizeof(listen_host)) &&
	       strcasecmp(host, listen_host) == 0;
}

/* An Origin is "scheme://host[:port]" or "null". */
static bool own_origin(const struct xd_config *cfg, const char *hostname,
		       const char *origin)
{
	const char *sep = strstr(origin, "://");
	char host[HOST_MAX];

	return sep != NULL && host_part(sep + 3, host, sizeof(host)) &&
	       own_host(cfg, hostname, host);
}

/* Whether the media type of a Content-Type is application/json
 * (parameters such as charset allowed). */
static bool is_json(const char *type)
{
	static const char json[] = "application/json";
	size_t n = sizeof(json) - 1;

	while (*type == ' ' || *type == '\t')
		type++;
	return strncasecmp(type, json, n) == 0 &&
	       (type[n] == '\0' || type[n] == ';' || type[n] == ' ' ||
		type[n] == '\t');
}

int xd_admin_guard(const struct xd_config *cfg, const struct xd_admin_request *r,
		   char *why, size_t why_len)
{
	char host[HOST_MAX];

	if (r->host != NULL &&
	    (!host_part(r->host, host, sizeof(host)) ||
	     !own_host(cfg, r->hostname, host))) {
		snprintf(why, why_len,
			 "Host '%.200s' does not name this endpoint (its names: IP addresses, localhost, this machine's host name, the host of admin_listen and admin_hosts:)",
			 r->host);
		return 403;
	}
	if (r->origin != NULL && !own_origin(cfg, r->hostname, r->origin)) {
		snprintf(why, why_len,
			 "a request from the web page of '%.200s' (Origin): the admin endpoint serves no other site",
			 r->origin);
		return 403;
	}
	if (r->fetch_site != NULL && (strcasecmp(r->fetch_site, "cross-site") == 0 ||
				      strcasecmp(r->fetch_site, "same-site") == 0)) {
		snprintf(why, why_len,
			 "a %.20s request (Sec-Fetch-Site): the admin endpoint serves no other site",
			 r->fetch_site);
		return 403;
	}
	if (strcmp(r->method, "POST") == 0 &&
	    (r->content_type == NULL || !is_json(r->content_type))) {
		if (r->content_type == NULL)
			snprintf(why, why_len,
				 "a POST needs Content-Type: application/json (none was sent)");
		else
			snprintf(why, why_len,
				 "a POST needs Content-Type: application/json (not '%.100s')",
				 r->content_type);
		return 415;
	}
	return 0;
}
