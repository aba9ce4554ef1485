// Process settings Swift cannot call itself: prctl(2) is variadic, so Glibc's Swift overlay does
// not import it. Header only (static inline): no library is linked or loaded.
#ifndef IAPCTL_CPROCESS_SHIM_H
#define IAPCTL_CPROCESS_SHIM_H

#include <sys/prctl.h>
#include <sys/resource.h>

/// Keeps what the process holds (signing keys, JWTs, database passwords) out of core dumps and
/// away from other processes of the same user: not dumpable (no core file; /proc/PID/mem,
/// environ and ptrace attach refused to non-root), and a core file size limit of 0, soft and hard.
/// Returns 0, or -1 when either call failed.
static inline int iapctl_keep_out_of_core_dumps(void) {
    struct rlimit none = {0, 0};
    int dumpable = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    int limit = setrlimit(RLIMIT_CORE, &none);
    return dumpable == 0 && limit == 0 ? 0 : -1;
}

#endif
