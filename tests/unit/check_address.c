/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host:port addresses (util/address.c): the one splitter and resolver
 * that the HTTP listeners, the gRPC server's bind diagnosis and the
 * HTTP client share. IPv4, [IPv6]:port and host names come apart into
 * host and port and resolve to what a listener binds; a missing or bad
 * port, a unix: address where host:port is needed and a name that does
 * not resolve are refused with a sentence that quotes the value.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util/address.h"
#include "xdtest.h"

static char host[NI_MAXHOST], port[8], why[2048];

static int split(const char *s)
{
	host[0] = port[0] = why[0] = '\0';
	return xd_address_split(s, host, sizeof(host), port, sizeof(port),
				why, sizeof(why));
}

START_TEST(ipv4_and_names_split)
{
	ck_assert_int_eq(split("127.0.0.1:18000"), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_str_eq(port, "18000");
	ck_assert_int_eq(split("0.0.0.0:0"), 0);
	ck_assert_str_eq(host, "0.0.0.0");
	ck_assert_str_eq(port, "0");
	ck_assert_int_eq(split("xds.example.internal:65535"), 0);
	ck_assert_str_eq(host, "xds.example.internal");
	ck_assert_str_eq(port, "65535");
}
END_TEST

START_TEST(ipv6_loses_its_brackets)
{
	ck_assert_int_eq(split("[::1]:5000"), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_str_eq(port, "5000");
	ck_assert_int_eq(split("[fe80::1%lo]:80"), 0);
	ck_assert_str_eq(host, "fe80::1%lo");
	ck_assert_str_eq(port, "80");
}
END_TEST

START_TEST(bad_addresses_quoted)
{
	ck_assert_int_eq(split("127.0.0.1"), -1);
	ck_assert_str_eq(why, "'127.0.0.1': missing :port (form: host:port)");
	ck_assert_int_eq(split("127.0.0.1:http"), -1);
	ck_assert_str_eq(why, "'127.0.0.1:http': port must be a number from 0 to 65535");
	ck_assert_int_eq(split("127.0.0.1:65536"), -1);
	ck_assert_str_eq(why, "'127.0.0.1:65536': port must be a number from 0 to 65535");
	ck_assert_int_eq(split("127.0.0.1:"), -1);
	ck_assert_str_eq(why, "'127.0.0.1:': port must be a number from 0 to 65535");
	ck_assert_int_eq(split("[::1]"), -1);
	ck_assert_str_eq(why, "'[::1]': missing :port after ]");
	ck_assert_int_eq(split("::1:80"), -1);
	ck_assert_str_eq(why, "'::1:80': IPv6 addresses need brackets: [::]:18000");
	ck_assert_int_eq(split(":80"), -1);
	ck_assert_str_eq(why, "':80': missing host (use 0.0.0.0:port for every address)");
	ck_assert_int_eq(split("unix:/run/xdsd.sock"), -1);
	ck_assert_str_eq(why, "'unix:/run/xdsd.sock': a unix socket, where host:port is needed");
	/* nothing is written on failure but the reason */
	ck_assert_str_eq(host, "");
	ck_assert_str_eq(port, "");
}
END_TEST

START_TEST(host_longer_than_room_refused)
{
	char s[64], small[4];

	snprintf(s, sizeof(s), "abcd:1");
	ck_assert_int_eq(xd_address_split(s, small, sizeof(small), port,
					  sizeof(port), why, sizeof(why)), -1);
	ck_assert_str_eq(why, "'abcd:1': host name too long");
	ck_assert_int_eq(xd_address_split("abc:1", small, sizeof(small), port,
					  sizeof(port), why, sizeof(why)), 0);
	ck_assert_str_eq(small, "abc");
}
END_TEST

START_TEST(resolves_what_a_listener_binds)
{
	struct addrinfo *res;
	const struct sockaddr_in *in;
	const struct sockaddr_in6 *in6;
	char text[INET6_ADDRSTRLEN];

	ck_assert_int_eq(xd_address_resolve("127.0.0.1:18000", &res, why, sizeof(why)), 0);
	ck_assert_int_eq(res->ai_family, AF_INET);
	ck_assert_int_eq(res->ai_socktype, SOCK_STREAM);
	in = (const void *)res->ai_addr;
	ck_assert_int_eq(ntohs(in->sin_port), 18000);
	ck_assert_str_eq(inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)), "127.0.0.1");
	freeaddrinfo(res);

	ck_assert_int_eq(xd_address_resolve("[::1]:5000", &res, why, sizeof(why)), 0);
	ck_assert_int_eq(res->ai_family, AF_INET6);
	in6 = (const void *)res->ai_addr;
	ck_assert_int_eq(ntohs(in6->sin6_port), 5000);
	ck_assert_str_eq(inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)), "::1");
	freeaddrinfo(res);

	/* a host name, from /etc/hosts: loopback, whichever family first */
	ck_assert_int_eq(xd_address_resolve("localhost:80", &res, why, sizeof(why)), 0);
	ck_assert(res->ai_family == AF_INET || res->ai_family == AF_INET6);
	freeaddrinfo(res);
}
END_TEST

START_TEST(resolve_failures_say_what)
{
	struct addrinfo *res = (void *)&res;

	ck_assert_int_eq(xd_address_resolve("127.0.0.1", &res, why, sizeof(why)), -1);
	ck_assert_ptr_null(res);
	ck_assert_str_eq(why, "'127.0.0.1': missing :port (form: host:port)");
	/* .invalid never resolves (RFC 6761) */
	ck_assert_int_eq(xd_address_resolve("nowhere.invalid:80", &res, why, sizeof(why)), -1);
	ck_assert_ptr_null(res);
	ck_assert_msg(strncmp(why, "cannot resolve 'nowhere.invalid': ", 34) == 0 &&
		      strlen(why) > 34, "%s", why);
}
END_TEST

static Suite *address_suite(void)
{
	Suite *s = suite_create("address");
	TCase *tc = tcase_create("address");

	tcase_add_test(tc, ipv4_and_names_split);
	tcase_add_test(tc, ipv6_loses_its_brackets);
	tcase_add_test(tc, bad_addresses_quoted);
	tcase_add_test(tc, host_longer_than_room_refused);
	tcase_add_test(tc, resolves_what_a_listener_binds);
	tcase_add_test(tc, resolve_failures_say_what);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return xdtest_run(address_suite());
}
