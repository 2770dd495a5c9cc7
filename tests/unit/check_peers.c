/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bookkeeping behind two limits on peers: connections per client
 * address (transport/peers.c) and requests a second (util/bucket.c).
 */
#include <stdio.h>

#include "transport/peers.h"
#include "util/bucket.h"
#include "xdtest.h"

START_TEST(peers_count_connections_per_address)
{
	struct xd_peers *p = xd_peers_new(NULL, 0);

	ck_assert(xd_peers_open(p, "ipv4:10.0.0.1:1000", 2));
	/* a second stream on the same connection: not a new connection */
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.1:1000", 2));
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.1:1001", 2));
	ck_assert_uint_eq(xd_peers_connections(p, "ipv4:10.0.0.1:9"), 2);
	ck_assert(!xd_peers_open(p, "ipv4:10.0.0.1:1002", 2));
	/* another address has its own count; so has IPv6 */
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.2:1000", 2));
	ck_assert(xd_peers_open(p, "ipv6:[::1]:1000", 2));
	ck_assert(xd_peers_open(p, "ipv6:[::1]:1001", 2));
	ck_assert(!xd_peers_open(p, "ipv6:[::1]:1002", 2));
	/* the connection stays counted until its last stream ends */
	xd_peers_close(p, "ipv4:10.0.0.1:1000");
	ck_assert(!xd_peers_open(p, "ipv4:10.0.0.1:1002", 2));
	xd_peers_close(p, "ipv4:10.0.0.1:1000");
	ck_assert_uint_eq(xd_peers_connections(p, "ipv4:10.0.0.1:9"), 1);
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.1:1002", 2));
	/* unix peers have no address to count; 0 means no limit */
	for (int i = 0; i < 5; i++)
		ck_assert(xd_peers_open(p, "unix:", 1));
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.1:1003", 0));
	/* closing what was never counted changes nothing */
	xd_peers_close(p, "ipv4:10.9.9.9:1");
	ck_assert_uint_eq(xd_peers_connections(p, "ipv4:10.9.9.9:1"), 0);
	xd_peers_free(p);
}
END_TEST

/* Many connections from one address: the table grows and stays exact. */
START_TEST(peers_many)
{
	struct xd_peers *p = xd_peers_new(NULL, 0);
	char peer[64];

	for (int i = 0; i < 5000; i++) {
		snprintf(peer, sizeof(peer), "ipv4:10.0.%d.%d:%d", i % 7, i % 3, i);
		ck_assert(xd_peers_open(p, peer, 0));
	}
	for (int i = 0; i < 5000; i += 2) {
		snprintf(peer, sizeof(peer), "ipv4:10.0.%d.%d:%d", i % 7, i % 3, i);
		xd_peers_close(p, peer);
	}
	ck_assert_uint_eq(xd_peers_connections(p, "ipv4:10.0.0.0:1"),
			  /* i % 21 == 0 and odd: i = 21, 63, ... below 5000 */
			  119);
	xd_peers_free(p);
}
END_TEST

/* A trusted proxy's address holds as many connections as it likes;
 * another address of the same network is still limited. */
START_TEST(peers_trusted_not_limited)
{
	struct xd_cidr trusted[2];
	struct xd_peers *p;
	char why[128], peer[64];

	ck_assert_int_eq(xd_address_cidr_parse("10.0.0.0/30", &trusted[0], why, sizeof(why)), 0);
	ck_assert_int_eq(xd_address_cidr_parse("::1", &trusted[1], why, sizeof(why)), 0);
	p = xd_peers_new(trusted, 2);
	for (int i = 0; i < 20; i++) {
		snprintf(peer, sizeof(peer), "ipv4:10.0.0.2:%d", 1000 + i);
		ck_assert(xd_peers_open(p, peer, 2));
		snprintf(peer, sizeof(peer), "ipv6:%%5B::1%%5D:%d", 1000 + i);
		ck_assert(xd_peers_open(p, peer, 2));
	}
	ck_assert_uint_eq(xd_peers_connections(p, "ipv4:10.0.0.2:9"), 20);
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.4:1000", 2));
	ck_assert(xd_peers_open(p, "ipv4:10.0.0.4:1001", 2));
	ck_assert(!xd_peers_open(p, "ipv4:10.0.0.4:1002", 2));
	ck_assert(xd_peers_open(p, "ipv6:[::2]:1000", 2));
	ck_assert(xd_peers_open(p, "ipv6:[::2]:1001", 2));
	ck_assert(!xd_peers_open(p, "ipv6:[::2]:1002", 2));
	for (int i = 0; i < 20; i++) {
		snprintf(peer, sizeof(peer), "ipv4:10.0.0.2:%d", 1000 + i);
		xd_peers_close(p, peer);
	}
	ck_assert_uint_eq(xd_peers_connections(p, "ipv4:10.0.0.2:9"), 0);
	xd_peers_free(p);
}
END_TEST

START_TEST(bucket_rate_and_burst)
{
	struct xd_bucket b;
	int taken = 0;

	xd_bucket_init(&b, 10, 1000);
	while (xd_bucket_take(&b, 5, 10, 1000))
		taken++;
	ck_assert_int_eq(taken, 10); /* the burst, at once */
	ck_assert(!xd_bucket_take(&b, 5, 10, 1100)); /* 0.5 token back */
	ck_assert(xd_bucket_take(&b, 5, 10, 1200));  /* 1 token */
	ck_assert(!xd_bucket_take(&b, 5, 10, 1200));
	/* a long pause refills to the burst, no more */
	taken = 0;
	while (xd_bucket_take(&b, 5, 10, 100000))
		taken++;
	ck_assert_int_eq(taken, 10);
	/* a clock that goes back takes nothing away */
	ck_assert(!xd_bucket_take(&b, 5, 10, 50000));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("peers");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, peers_count_connections_per_address);
	tcase_add_test(tc, peers_many);
	tcase_add_test(tc, peers_trusted_not_limited);
	tcase_add_test(tc, bucket_rate_and_burst);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
