/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client status service's pure parts: who may call it, and how a
 * ClientStatusRequest is read and its node matchers applied. The RPCs
 * and answers are tested against the real daemon (tests/e2e/check_csds).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "admin/csds.h"
#include "admin/csds_service.h"
#include "xdtest.h"

/* Without client certificates: loopback and the unix socket only. */
START_TEST(without_mtls_loopback_and_unix_peers)
{
	struct xd_config cfg = {0};
	static const char *const local[] = {
		"ipv4:127.0.0.1:5000", "ipv4:127.8.9.10:1", "ipv6:[::1]:5000",
		"ipv6:%5B::1%5D:5000", "ipv6:[::ffff:127.0.0.1]:7",
		"unix:/run/xdsd/xds.sock", "unix:",
	};
	static const char *const remote[] = {
		"ipv4:10.0.0.7:5000", "ipv4:128.0.0.1:1", "ipv6:[::2]:5000",
		"ipv6:[::10]:5000", "ipv6:[::ffff:10.0.0.1]:7", "ipv4:1127.0.0.1:1",
		"", "ipv6:::1:5000",
	};

	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		ck_assert_msg(xd_csds_allowed(&cfg, local[i], NULL), "%s", local[i]);
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		ck_assert_msg(!xd_csds_allowed(&cfg, remote[i], "spiffe://x/ops"),
			      "%s", remote[i]);
}
END_TEST

/* With them: the identities of csds_allow, wherever they connect from;
 * loopback and the unix socket are no identity. */
START_TEST(csds_allow_lets_identities_in)
{
	char *globs[] = {"spiffe://example.org/ns/ops/sa/*", "admin.example.org"};
	struct xd_config cfg = {.csds_allow = globs, .ncsds_allow = 2};
	static const char *const peers[] = {
		"ipv4:10.0.0.7:5000", "ipv4:127.0.0.1:5000", "unix:/run/xdsd/xds.sock",
	};

	cfg.tls.client_ca = "/etc/xdsd/tls/ca.pem";
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		const char *peer = peers[i];

		ck_assert(xd_csds_allowed(&cfg, peer, "spiffe://example.org/ns/ops/sa/tool"));
		ck_assert(xd_csds_allowed(&cfg, peer, "admin.example.org"));
		ck_assert(!xd_csds_allowed(&cfg, peer, "spiffe://example.org/ns/prod/sa/tool"));
		ck_assert(!xd_csds_allowed(&cfg, peer, "admin.example.org.evil"));
		ck_assert_msg(!xd_csds_allowed(&cfg, peer, NULL), "%s", peer);
	}
	/* none listed: nobody */
	cfg.ncsds_allow = 0;
	ck_assert(!xd_csds_allowed(&cfg, "ipv4:127.0.0.1:5000", "admin.example.org"));
}
END_TEST

static int parse(struct xd_csds_query *q, const char *bytes, size_t len,
		 char *why)
{
	return xd_csds_query_parse(q, (const uint8_t *)bytes, len, why, 256);
}

START_TEST(matchers_are_read_and_applied)
{
	struct xd_csds_query q;
	char why[256];
	/* [{node_id: {prefix: "eu-", ignore_case: true}},
	 *  {node_id: {exact: "x", suffix: "-7"}}] (the last of a oneof wins),
	 * exclude_resource_contents, and a node (field 2) left unread */
	static const char req[] =
		"\x0a\x09\x0a\x07\x12\x03" "eu-" "\x30\x01"
		"\x0a\x09\x0a\x07\x0a\x01" "x" "\x1a\x02" "-7"
		"\x18\x01"
		"\x12\x03\x0a\x01" "n";

	ck_assert_int_eq(parse(&q, req, sizeof(req) - 1, why), 0);
	ck_assert_int_eq(q.nmatchers, 2);
	ck_assert(q.exclude_contents);
	ck_assert(xd_csds_query_matches(&q, "EU-west", 7));
	ck_assert(xd_csds_query_matches(&q, "node-7", 6));
	ck_assert(!xd_csds_query_matches(&q, "x", 1));
	ck_assert(!xd_csds_query_matches(&q, "us-east", 7));
	ck_assert(!xd_csds_query_matches(&q, "e", 1));
	xd_csds_query_free(&q);

	/* empty: every node */
	ck_assert_int_eq(parse(&q, "", 0, why), 0);
	ck_assert(xd_csds_query_matches(&q, "anything", 8));
	xd_csds_query_free(&q);
	/* contains, and a NodeMatcher without node_id: any node */
	ck_assert_int_eq(parse(&q, "\x0a\x07\x0a\x05\x3a\x03" "b\0c" "\x0a\x00",
			       11, why), 0);
	ck_assert(xd_csds_query_matches(&q, "ab\0cd", 5));
	ck_assert(xd_csds_query_matches(&q, "zzz", 3));
	xd_csds_query_free(&q);
}
END_TEST

START_TEST(what_is_not_done_is_refused)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *why;
	} bad[] = {
		{"\x0a\x02\x12\x00", 4, "node_metadatas is not supported"},
		{"\x0a\x04\x0a\x02\x2a\x00", 6, "safe_regex is not supported"},
		{"\x0a\x04\x0a\x02\x42\x00", 6, "custom is not supported"},
		{"\x0a\x04\x0a\x02\x30\x01", 6, "has no pattern"},
		{"\x0a\x04\x0a\x02\x12\x00", 6, "prefix must not be empty"},
		{"\x0a\x04\x0a\x02\x08\x01", 6, "malformed node_id matcher"},
		{"\x0a\x02\x08\x01", 4, "malformed NodeMatcher"},
		{"\x08\x01", 2, "malformed ClientStatusRequest"},
		{"\x1a\x00", 2, "malformed ClientStatusRequest"},
		{"\x0a\x05\x0a", 3, "malformed ClientStatusRequest"},
		{"\xff\xff\xff", 3, "malformed ClientStatusRequest"},
	};
	struct xd_csds_query q;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(&q, bad[i].bytes, bad[i].len, why) == -1,
			      "case %zu parsed", i);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "case %zu: '%s'",
			      i, why);
	}
}
END_TEST

START_TEST(matchers_are_bounded)
{
	size_t n = XD_CSDS_MAX_MATCHERS + 1;
	char *req = malloc(n * 2), why[256];
	struct xd_csds_query q;

	for (size_t i = 0; i < n; i++)
		memcpy(req + 2 * i, "\x0a\x00", 2);
	ck_assert_int_eq(parse(&q, req, 2 * (n - 1), why), 0);
	ck_assert_int_eq(q.nmatchers, XD_CSDS_MAX_MATCHERS);
	xd_csds_query_free(&q);
	ck_assert_int_eq(parse(&q, req, 2 * n, why), -1);
	ck_assert_str_eq(why, "more than 64 node_matchers");
	free(req);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("csds");
	TCase *tc = tcase_create("csds");

	tcase_add_test(tc, without_mtls_loopback_and_unix_peers);
	tcase_add_test(tc, csds_allow_lets_identities_in);
	tcase_add_test(tc, matchers_are_read_and_applied);
	tcase_add_test(tc, what_is_not_done_is_refused);
	tcase_add_test(tc, matchers_are_bounded);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
