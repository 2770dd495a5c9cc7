/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The protocol test suites, each defined in its check_*.c. Each program
 * registers its own; check_valgrind_proto registers a representative
 * subset of all of them (`subset`), built from the same sources with
 * PU_NO_MAIN.
 */
#ifndef XD_TESTS_PROTOCOL_SUITES_H
#define XD_TESTS_PROTOCOL_SUITES_H

#include <check.h>
#include <stdbool.h>

void pu_register_sotw(Suite *s, bool subset);
void pu_register_delta(Suite *s, bool subset);
void pu_register_ads(Suite *s, bool subset);
void pu_register_types(Suite *s, bool subset);
void pu_register_wire(Suite *s, bool subset);
void pu_register_xdstp(Suite *s, bool subset);
void pu_register_dyn(Suite *s, bool subset);
void pu_register_collections(Suite *s, bool subset);
void pu_register_ecds(Suite *s, bool subset);
void pu_register_leds(Suite *s, bool subset);
void pu_register_errors(Suite *s, bool subset);

#endif
