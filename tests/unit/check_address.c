/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host:port addresses (util/address.c): the one splitter and resolver
 * that the HTTP listeners, the gRPC server's bind diagnosis and the
 * HTTP client share. IPv4, [IPv6]:port and host names come apart into
 * host and port and resolve to what a listener binds; a missing or bad
 * port, a unix: address where host:port is needed and a name that does
 * not resolve are refused with a sentence that quotes the value.
 * And the prefixes of trusted_proxies: parsed, matched against socket
 * addresses and gRPC peer names, bad ones refused the same way.
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

static struct xd_cidr cidr;

static int cidr_parse(const char *s)
{
	why[0] = '\0';
	return xd_address_cidr_parse(s, &cidr, why, sizeof(why));
}

/* `text` ("10.1.2.3" or "::1") as a socket address, port 40112. */
static const struct sockaddr *sock(const char *text)
{
	static struct sockaddr_storage ss;
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST}, *res;

	ck_assert_int_eq(getaddrinfo(text, "40112", &hints, &res), 0);
	memcpy(&ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return (const struct sockaddr *)&ss;
}

START_TEST(cidrs_parse)
{
	static const struct {
		const char *text;
		int family;
		unsigned bits;
	} cases[] = {
		{"10.0.0.0/8", AF_INET, 8},
		{"127.0.0.1", AF_INET, 32},
		{"0.0.0.0/0", AF_INET, 0},
		{"fd00::/8", AF_INET6, 8},
		{"::1", AF_INET6, 128},
		/* an IPv4-mapped prefix is the IPv4 one */
		{"::ffff:10.0.0.0/104", AF_INET, 8},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(cidr_parse(cases[i].text) == 0, "%s", why);
		ck_assert_int_eq(cidr.family, cases[i].family);
		ck_assert_uint_eq(cidr.bits, cases[i].bits);
	}
}
END_TEST

START_TEST(bad_cidrs_quoted)
{
	static const char *const cases[][2] = {
		{"10.0.0.1/8", "'10.0.0.1/8': bits set after the /8 prefix (10.0.0.0/8?)"},
		{"fd00::1/8", "'fd00::1/8': bits set after the /8 prefix (fd00::/8?)"},
		{"10.0.0.0/33", "'10.0.0.0/33': the prefix length must be a number from 0 to 32"},
		{"fd00::/129", "'fd00::/129': the prefix length must be a number from 0 to 128"},
		{"10.0.0.0/", "'10.0.0.0/': the prefix length must be a number from 0 to 32"},
		{"10.0.0.0/-1", "'10.0.0.0/-1': the prefix length must be a number from 0 to 32"},
		{"lb.example.org", "'lb.example.org': not an IPv4 or IPv6 address or prefix (host names are not resolved)"},
		{"10.0.0", "'10.0.0': not an IPv4 or IPv6 address or prefix (host names are not resolved)"},
		{"10.0.0.7:8080", "'10.0.0.7:8080': not an address or prefix (no port: 10.0.0.7, 10.0.0.0/8)"},
		{"[::1]", "'[::1]': not an address or prefix (no brackets, no port: fd00::/8, ::1)"},
		{"", "'': empty; an address or prefix is needed (10.0.0.0/8, fd00::/8, 127.0.0.1)"},
		{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
		 "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128': not an address or prefix (too long)"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(cidr_parse(cases[i][0]), -1);
		ck_assert_str_eq(why, cases[i][1]);
	}
}
END_TEST

START_TEST(cidrs_match)
{
	struct xd_cidr list[3];
	struct sockaddr_un { sa_family_t sun_family; char path[8]; } un = {AF_UNIX, "x"};

	ck_assert_int_eq(xd_address_cidr_parse("10.1.0.0/17", &list[0], why, sizeof(why)), 0);
	ck_assert_int_eq(xd_address_cidr_parse("fd00::/8", &list[1], why, sizeof(why)), 0);
	ck_assert_int_eq(xd_address_cidr_parse("127.0.0.1", &list[2], why, sizeof(why)), 0);
	ck_assert(xd_address_in(list, 3, sock("10.1.127.255")));
	ck_assert(!xd_address_in(list, 3, sock("10.1.128.0")));
	ck_assert(!xd_address_in(list, 3, sock("10.2.0.1")));
	ck_assert(xd_address_in(list, 3, sock("127.0.0.1")));
	ck_assert(!xd_address_in(list, 3, sock("127.0.0.2")));
	ck_assert(xd_address_in(list, 3, sock("fdab::7")));
	ck_assert(!xd_address_in(list, 3, sock("fe00::7")));
	/* a dual-stack listener's view of an IPv4 client */
	ck_assert(xd_address_in(list, 3, sock("::ffff:10.1.0.9")));
	ck_assert(!xd_address_in(list, 3, sock("::1")));
	ck_assert(!xd_address_in(list, 0, sock("127.0.0.1")));
	ck_assert(!xd_address_in(list, 3, (const struct sockaddr *)&un));
	ck_assert_int_eq(xd_address_cidr_parse("0.0.0.0/0", &list[0], why, sizeof(why)), 0);
	ck_assert(xd_address_in(list, 1, sock("203.0.113.9")));
	ck_assert(!xd_address_in(list, 1, sock("2001:db8::1")));
}
END_TEST

START_TEST(grpc_peers_read)
{
	struct sockaddr_storage ss;
	char text[64];

	ck_assert(xd_address_from_peer("ipv4:10.0.0.7:40112", &ss));
	xd_address_format((struct sockaddr *)&ss, text, sizeof(text));
	ck_assert_str_eq(text, "10.0.0.7:40112");
	ck_assert(xd_address_from_peer("ipv6:[fd00::7]:5000", &ss));
	xd_address_format((struct sockaddr *)&ss, text, sizeof(text));
	ck_assert_str_eq(text, "[fd00::7]:5000");
	ck_assert(xd_address_from_peer("ipv6:%5B::1%5D:5000", &ss));
	xd_address_format((struct sockaddr *)&ss, text, sizeof(text));
	ck_assert_str_eq(text, "[::1]:5000");
	ck_assert(!xd_address_from_peer("unix:/run/xds.sock", &ss));
	ck_assert(!xd_address_from_peer("ipv4:not-an-address:1", &ss));
	ck_assert(!xd_address_from_peer("ipv4:10.0.0.7", &ss));
	ck_assert(!xd_address_from_peer("ipv6:[fd00::7", &ss));
}
END_TEST

START_TEST(private_addresses)
{
	ck_assert(xd_address_is_private(sock("127.0.0.1")));
	ck_assert(xd_address_is_private(sock("10.20.30.40")));
	ck_assert(xd_address_is_private(sock("172.31.255.1")));
	ck_assert(!xd_address_is_private(sock("172.32.0.1")));
	ck_assert(xd_address_is_private(sock("192.168.1.1")));
	ck_assert(xd_address_is_private(sock("100.64.0.1")));
	ck_assert(xd_address_is_private(sock("::1")));
	ck_assert(xd_address_is_private(sock("fd12::1")));
	ck_assert(xd_address_is_private(sock("::ffff:10.0.0.1")));
	ck_assert(!xd_address_is_private(sock("203.0.113.9")));
	ck_assert(!xd_address_is_private(sock("2001:db8::1")));
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
	tcase_add_test(tc, cidrs_parse);
	tcase_add_test(tc, bad_cidrs_quoted);
	tcase_add_test(tc, cidrs_match);
	tcase_add_test(tc, grpc_peers_read);
	tcase_add_test(tc, private_addresses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return xdtest_run(address_suite());
}
