// (no upstream counterpart; the kernel's closest relative is sparse's __acquires/__releases/
// __must_hold) Clang's thread-safety attributes behind the usual macro names. Under clang
// -Wthread-safety checks them at compile time: a member GUARDED_BY a lock is touched only with
// that lock held, a function that REQUIRES a lock is called only with it held. Under gcc every
// macro expands to nothing. Built and enforced (-Werror=thread-safety) in the `fuzz` preset.
// docs/kshim.md ("Locks") says which locks are annotated and how the patterns the analysis
// cannot follow are handled.
#pragma once

#if defined(__clang__)
#define KSHIM_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define KSHIM_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) KSHIM_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY KSHIM_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) KSHIM_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) KSHIM_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) KSHIM_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) KSHIM_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) KSHIM_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) KSHIM_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) KSHIM_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) KSHIM_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) KSHIM_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) KSHIM_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) KSHIM_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) KSHIM_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) KSHIM_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) KSHIM_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) KSHIM_THREAD_ANNOTATION(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) KSHIM_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS KSHIM_THREAD_ANNOTATION(no_thread_safety_analysis)
