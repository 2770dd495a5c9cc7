/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Debian builds gRPC's abseil without NDEBUG, so every absl::Mutex lock
 * also updates a global deadlock-detection graph under a global lock:
 * about 7% of xdsd's CPU with thousands of streams. That check is a
 * debugging aid; a production daemon turns it off.
 *
 * Thread: call once at start, before gRPC starts threads.
 */
#ifndef XD_TRANSPORT_ABSEIL_H
#define XD_TRANSPORT_ABSEIL_H

#include <stdbool.h>

/* Turns abseil's mutex deadlock detection off when the library has it;
 * returns whether it did. */
bool xd_abseil_deadlock_detection_off(void);

#endif
