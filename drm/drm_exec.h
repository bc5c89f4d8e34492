// Mirrors include/drm/drm_exec.h: locking many GEM objects' reservations at once.
//
// DOC: Overview. A drm_exec holds a ww_acquire_ctx and the array of objects it has locked (each
// with a reference). Lock calls that hit a wound/wait back-off (-EDEADLK) remember the
// contended object and return -EDEADLK; drm_exec_retry_on_contention() then jumps back to the
// top of drm_exec_until_all_locked(), which drops every lock, takes the contended one first
// with the slow path (it waits, never backs off) and runs the body again:
//
//     drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT, 0);
//     drm_exec_until_all_locked(&exec) {
//         ret = drm_exec_prepare_obj(&exec, boA, 1);
//         drm_exec_retry_on_contention(&exec);
//         if (ret) goto error;
//         ...
//     }
//     ... use the objects ...
//     drm_exec_fini(&exec);
//
// As upstream, the loop is built from GNU C labels-as-values so the retry works from inside
// nested loops of the body (g++ and clang++ accept it in C++); leaving the body by the retry
// jump runs the destructors of locals declared inside it, as any goto does.
#pragma once
#include "drm/drm_gem.h"

namespace drm {

inline constexpr u32 DRM_EXEC_INTERRUPTIBLE_WAIT = 1u << 0;
inline constexpr u32 DRM_EXEC_IGNORE_DUPLICATES = 1u << 1;

struct drm_exec {
    u32 flags = 0;
    kshim::WwAcquireCtx ticket;
    unsigned num_objects = 0;
    unsigned max_objects = 0;
    drm_gem_object** objects = nullptr;  // locked objects, each referenced; kmalloc'ed
    // The object that made us back off (referenced), null, or kDummy before the first pass.
    drm_gem_object* contended = nullptr;
    // Locked by the slow path at the top of a pass, waiting for the body to ask for it again.
    drm_gem_object* prelocked = nullptr;
};

// Marks "the loop has not started" in drm_exec::contended (upstream DRM_EXEC_DUMMY).
inline drm_gem_object* const DRM_EXEC_DUMMY = reinterpret_cast<drm_gem_object*>(~uintptr_t{0});

// nr: expected number of objects (0: a page worth).
void drm_exec_init(drm_exec* exec, u32 flags, unsigned nr);
void drm_exec_fini(drm_exec* exec);
// Loop condition of drm_exec_until_all_locked: true to run (again) the body.
bool drm_exec_cleanup(drm_exec* exec);
// 0; -EDEADLK (retry); -EALREADY for an object already locked in this context unless
// DRM_EXEC_IGNORE_DUPLICATES; -ENOMEM.
int drm_exec_lock_obj(drm_exec* exec, drm_gem_object* obj);
void drm_exec_unlock_obj(drm_exec* exec, drm_gem_object* obj);
// Locks and reserves num_fences fence slots.
int drm_exec_prepare_obj(drm_exec* exec, drm_gem_object* obj, unsigned num_fences);
int drm_exec_prepare_array(drm_exec* exec, drm_gem_object** objects, unsigned num_objects, unsigned num_fences);

inline bool drm_exec_is_contended(const drm_exec* exec) {
    return exec->contended != nullptr;
}
inline kshim::WwAcquireCtx* drm_exec_ticket(drm_exec* exec) {
    return &exec->ticket;
}

// drm_exec_for_each_locked_object(exec, index, obj) as a call: f(index, obj) in lock order.
template <class F>
void drm_exec_for_each_locked_object(drm_exec* exec, F&& f) {
    for (unsigned i = 0; i < exec->num_objects; i++)
        f(i, exec->objects[i]);
}
template <class F>
void drm_exec_for_each_locked_object_reverse(drm_exec* exec, F&& f) {
    for (unsigned i = exec->num_objects; i-- > 0;)
        f(i, exec->objects[i]);
}

}  // namespace drm

#define __drm_exec_until_all_locked(exec, label) \
    label:                                       \
    for (void* __drm_exec_retry_ptr = &&label; ((void)__drm_exec_retry_ptr, ::drm::drm_exec_cleanup(exec));)

// Runs the following block until every lock in it was taken without a back-off.
#define drm_exec_until_all_locked(exec) __drm_exec_until_all_locked(exec, KSHIM_CONCAT(__drm_exec_retry_, __COUNTER__))

// Inside drm_exec_until_all_locked: after a back-off, start the block over.
#define drm_exec_retry_on_contention(exec)                           \
    do {                                                             \
        if (__builtin_expect(::drm::drm_exec_is_contended(exec), 0)) \
            goto* __drm_exec_retry_ptr;                              \
    } while (0)
