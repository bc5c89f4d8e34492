// Mirrors include/linux/lockdep.h: lockdep-lite.
//
// Every lock (and pseudo-lock, such as fs_reclaim or the fence-signalling map) has a LockdepMap
// whose class is keyed by the place the lock was constructed, as the kernel keys classes by
// their static init site. Acquisitions record "held before" edges between classes in one global
// graph; an edge that closes a cycle is reported with both chains, whether or not the deadlock
// happened in this run. Reports fail the running test.
#pragma once
#include <source_location>
#include <string>

#include "kernel_shim/gfp.h"
#include "kernel_shim/task.h"
#include "kernel_shim/thread_safety.h"

namespace kshim {

struct LockClass;

// Class flags.
inline constexpr unsigned LOCKDEP_SIGNALLING = 1u << 0;  // cycles through it are fence-contract reports

struct LockdepMap {
    explicit LockdepMap(const char* name = nullptr, std::source_location site = std::source_location::current(),
                        unsigned flags = 0);
    // A map in an existing class (all ww_mutexes of one ww_class share their class).
    LockdepMap(LockClass* c, const char* n) : cls(c), name(n) {}
    LockClass* cls = nullptr;  // null when the debug checks are compiled out
    const char* name;
};

// read: 0 exclusive, 1 shared, 2 recursive shared (never blocks against other readers).
void lock_acquire(LockdepMap* map, u32 subclass, bool trylock, u8 read, const void* nest,
                  std::source_location loc = std::source_location::current());
void lock_release(LockdepMap* map, std::source_location loc = std::source_location::current());
bool lock_is_held(const LockdepMap* map);
// A lock is being destroyed: report it if the current task still holds it ("held lock freed!")
// and forget it, so no held-lock entry outlives its lock.
void lockdep_free_map(LockdepMap* map);

// What lock implementations call: compiled out, arguments and all, without the debug checks.
inline void lockdep_acquire(LockdepMap* m, u32 subclass, bool trylock, u8 read, const void* nest,
                            std::source_location loc) {
#if KSHIM_DEBUG_CHECKS
    lock_acquire(m, subclass, trylock, read, nest, loc);
#else
    (void)m, (void)subclass, (void)trylock, (void)read, (void)nest, (void)loc;
#endif
}
inline void lockdep_release(LockdepMap* m, std::source_location loc = std::source_location::current()) {
#if KSHIM_DEBUG_CHECKS
    lock_release(m, loc);
#else
    (void)m, (void)loc;
#endif
}

// Pseudo-lock helpers (lock_map_acquire / lock_map_release in the kernel).
inline void lock_map_acquire(LockdepMap* m, std::source_location loc = std::source_location::current()) {
#if KSHIM_DEBUG_CHECKS
    lock_acquire(m, 0, false, 0, nullptr, loc);
#endif
}
inline void lock_map_acquire_read(LockdepMap* m, std::source_location loc = std::source_location::current()) {
#if KSHIM_DEBUG_CHECKS
    lock_acquire(m, 0, false, 2, nullptr, loc);
#endif
}
inline void lock_map_release(LockdepMap* m, std::source_location loc = std::source_location::current()) {
#if KSHIM_DEBUG_CHECKS
    lock_release(m, loc);
#endif
}

// The reclaim pseudo-lock every blocking allocation takes and drops (mm/page_alloc.c).
extern LockdepMap fs_reclaim_map;
void fs_reclaim_acquire(gfp_t gfp);
void fs_reclaim_release(gfp_t gfp);

// Clears the dependency graph (classes stay) and re-runs the registered primers, which record
// the orders the kernel primes at boot (dma_resv -> fs_reclaim -> fence signalling). The runtime
// calls it when it starts, so each test starts from the primed graph.
void lockdep_reset();
void lockdep_register_primer(void (*primer)());

// Reports locks still held by a task that is finishing, then forgets them.
void lockdep_task_exit(Task* t);
std::string lockdep_held_locks_text(const Task* t);

void lockdep_assert_held_impl(const LockdepMap* m, bool want_held, std::source_location loc);

// What lockdep_assert_held expands to: a run-time owner check (with the debug checks), and for
// clang's thread-safety analysis an assertion that the lock is held from here on.
template <class L>
inline void lockdep_assert_held_checked(L* l, std::source_location loc) ASSERT_CAPABILITY(l) {
#if KSHIM_DEBUG_CHECKS
    lockdep_assert_held_impl(l->dep_map(), true, loc);
#else
    (void)l, (void)loc;
#endif
}
}  // namespace kshim

// lockdep_assert_held(&lock): works for every kshim lock type (they expose dep_map()).
#define lockdep_assert_held(l) ::kshim::lockdep_assert_held_checked((l), std::source_location::current())
#if KSHIM_DEBUG_CHECKS
#define lockdep_assert_not_held(l) \
    ::kshim::lockdep_assert_held_impl((l)->dep_map(), false, std::source_location::current())
#else
#define lockdep_assert_not_held(l) ((void)(l))
#endif
