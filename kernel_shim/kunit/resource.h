// Mirrors include/kunit/resource.h (the deferred-action subset) and the kunit_kmalloc family of
// include/kunit/test.h: resources owned by a test.
//
// A `kunit` is one test's resource list. kunit_add_action defers fn(ctx) until the test ends;
// kunit_cleanup runs the deferred actions newest first (one may depend on an older one for its
// whole life), one at a time, so an action may add or release others. kunit_kzalloc and friends
// are deferred kfree()s. The test fixture (tests/support/kernel_test.h) owns the `kunit` of each
// test and runs kunit_cleanup when the test body has returned, also after a failed ASSERT_, and
// before its leak and report checks: test-managed memory is no leak, anything else still is.
//
// Only the action form of upstream's resources is here (no named resources, no init/free pairs,
// no refcounted lookup): every upstream helper that tests use is built on it. The list node is a
// kmalloc, so allocation failure injection makes registering fail as it can upstream.
#pragma once
#include <atomic>
#include <cstddef>

#include <boost/intrusive/list.hpp>

#include "kernel_shim/gfp.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"

namespace kshim {

using kunit_action_t = void(void*);

struct kunit_resource {
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;
    kunit_action_t* action = nullptr;
    void* ctx = nullptr;
};

// struct kunit: the part of a test the resource API needs (upstream's also carries the test's
// status and log; gtest keeps those here).
struct kunit {
    explicit kunit(const char* name = "kunit") : name(name) {}
    // Runs what is still registered (a fixture normally did so already).
    ~kunit();
    kunit(const kunit&) = delete;
    kunit& operator=(const kunit&) = delete;

    const char* name;
    void* priv = nullptr;  // for the test's own use, as upstream's test->priv

    // Protects resources: work items and other tasks may register resources of the test.
    SpinLock lock{"kunit.lock"};
    boost::intrusive::list<
        kunit_resource,
        boost::intrusive::member_hook<kunit_resource, decltype(kunit_resource::node), &kunit_resource::node>,
        boost::intrusive::constant_time_size<false>>
        resources;
};

// The test running now (upstream: current->kunit_test; here one test runs per process at a
// time, so it is process-wide and every task of the test sees it). nullptr outside a test.
kunit* kunit_get_current_test();
// Set by the fixture around a test; returns the previous one.
kunit* kunit_set_current_test(kunit* test);

// 0, or -ENOMEM when the action cannot be registered (fn is then not called).
int kunit_add_action(kunit* test, kunit_action_t* action, void* ctx);
// As kunit_add_action, but when registering fails, runs action(ctx) at once and returns the error.
int kunit_add_action_or_reset(kunit* test, kunit_action_t* action, void* ctx);
// Unregisters the most recently registered (action, ctx) pair without running it; nothing if none.
void kunit_remove_action(kunit* test, kunit_action_t* action, void* ctx);
// Unregisters the most recently registered (action, ctx) pair and runs it now; nothing if none.
void kunit_release_action(kunit* test, kunit_action_t* action, void* ctx);
// Runs every registered action, newest first (lib/kunit/test.c: kunit_cleanup).
void kunit_cleanup(kunit* test);
// Registered actions (tests of this file).
unsigned kunit_resource_count(kunit* test);

// kmalloc'ed memory kfree'd when the test ends; nullptr when either allocation fails.
void* kunit_kmalloc_array(kunit* test, size_t n, size_t size, gfp_t gfp);
void* kunit_kmalloc(kunit* test, size_t size, gfp_t gfp);
void* kunit_kzalloc(kunit* test, size_t size, gfp_t gfp);
void* kunit_kcalloc(kunit* test, size_t n, size_t size, gfp_t gfp);
// Frees test-managed memory now; nothing for nullptr (or memory the test does not manage).
void kunit_kfree(kunit* test, const void* ptr);

// Defines `wrapper`, a kunit_action_t that calls orig(arg) (include/kunit/resource.h). It is
// static, as upstream's: actions are matched by address, so in a header shared by several files
// (whose inline functions register it) write an inline function instead.
#define KUNIT_DEFINE_ACTION_WRAPPER(wrapper, orig, arg_type) \
    static void wrapper(void* in) {                          \
        orig(static_cast<arg_type>(in));                     \
    }

// C++ objects: a knew'ed T that the test kdeletes when it ends (the typed kunit_kzalloc).
template <class T>
void kunit_kdelete_action(void* obj) {
    kdelete(static_cast<T*>(obj));
}
template <class T, class... Args>
T* kunit_knew(kunit* test, gfp_t gfp, Args&&... args) {
    T* obj = knew<T>(gfp, std::forward<Args>(args)...);
    if (!obj)
        return nullptr;
    if (kunit_add_action_or_reset(test, kunit_kdelete_action<T>, obj))
        return nullptr;
    return obj;
}
template <class T>
void kunit_kdelete(kunit* test, T* obj) {
    if (obj)
        kunit_release_action(test, kunit_kdelete_action<T>, obj);
}

}  // namespace kshim
