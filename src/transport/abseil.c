/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/abseil.h"

#include <dlfcn.h>
#include <stddef.h>

bool xd_abseil_deadlock_detection_off(void)
{
	/* absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle), by
	 * its C++ name: Debian's abseil namespace, then the plain one. It
	 * is looked up, not linked, so a gRPC without it changes nothing. */
	static const char *const names[] = {
		"_ZN4absl7debian329SetMutexDeadlockDetectionModeENS0_15OnDeadlockCycleE",
		"_ZN4absl29SetMutexDeadlockDetectionModeENS_15OnDeadlockCycleE",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *sym = dlsym(RTLD_DEFAULT, names[i]);

		if (sym != NULL) {
			void (*set_mode)(int);

			*(void **)&set_mode = sym;
			set_mode(0); /* absl::OnDeadlockCycle::kIgnore */
			return true;
		}
	}
	return false;
}
