/* make test-tsan: tells ThreadSanitizer about Swift's Synchronization.Mutex on Linux.
 *
 * Mutex's fast paths are inlined into the (instrumented) caller as atomic compare-and-swaps, which TSan sees; its
 * contended paths (_lockSlow, _tryLockSlow, _unlockSlow: a PI futex) live in the uninstrumented
 * libswiftSynchronization.so, so TSan misses the happens-before edge of a contended lock and reports every access
 * the lock protects as a race. Preloaded (LD_PRELOAD), this library interposes those three functions, calls the
 * real ones and adds the acquire/release on the lock word. Outside a TSan process it only forwards.
 *
 * The functions use Swift's calling convention: the lock word's address is `self` (swiftself, r13 on x86-64). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SWIFTCC __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

typedef SWIFTCC void (*lock_slow_fn)(uint32_t self_id, void *SWIFT_SELF word);
typedef SWIFTCC bool (*try_lock_slow_fn)(void *SWIFT_SELF word);
typedef SWIFTCC void (*unlock_slow_fn)(void *SWIFT_SELF word);

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) abort();
    return f;
}

SWIFTCC void tsan_mutex_lock_slow(uint32_t self_id, void *SWIFT_SELF word) __asm__(LOCK_SLOW);
SWIFTCC void tsan_mutex_lock_slow(uint32_t self_id, void *SWIFT_SELF word) {
    static lock_slow_fn f;
    if (f == NULL) f = (lock_slow_fn)real(LOCK_SLOW);
    f(self_id, word);
    if (__tsan_acquire) __tsan_acquire(word);
}

SWIFTCC bool tsan_mutex_try_lock_slow(void *SWIFT_SELF word) __asm__(TRY_LOCK_SLOW);
SWIFTCC bool tsan_mutex_try_lock_slow(void *SWIFT_SELF word) {
    static try_lock_slow_fn f;
    if (f == NULL) f = (try_lock_slow_fn)real(TRY_LOCK_SLOW);
    bool locked = f(word);
    if (locked && __tsan_acquire) __tsan_acquire(word);
    return locked;
}

SWIFTCC void tsan_mutex_unlock_slow(void *SWIFT_SELF word) __asm__(UNLOCK_SLOW);
SWIFTCC void tsan_mutex_unlock_slow(void *SWIFT_SELF word) {
    static unlock_slow_fn f;
    if (f == NULL) f = (unlock_slow_fn)real(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(word);
    f(word);
}
