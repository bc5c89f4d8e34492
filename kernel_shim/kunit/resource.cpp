// Mirrors lib/kunit/resource.c (the action API) and the kunit_kmalloc family of lib/kunit/test.c.
#include "kernel_shim/kunit/resource.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "kernel_shim/err.h"
#include "kernel_shim/report.h"

namespace kshim {

namespace {

std::atomic<kunit*> current_test{nullptr};

// The newest registration of (action, ctx), unlinked; nullptr if there is none.
kunit_resource* kunit_take_action(kunit* test, kunit_action_t* action, void* ctx) {
    SpinGuard g(test->lock);
    for (auto it = test->resources.rbegin(); it != test->resources.rend(); ++it) {
        if (it->action == action && it->ctx == ctx) {
            kunit_resource* res = &*it;
            test->resources.erase(test->resources.iterator_to(*res));
            return res;
        }
    }
    return nullptr;
}

void kfree_action_wrapper(void* p) {
    kfree(p);
}

}  // namespace

kunit::~kunit() {
    kunit_cleanup(this);
}

kunit* kunit_get_current_test() {
    return current_test.load(std::memory_order_acquire);
}

kunit* kunit_set_current_test(kunit* test) {
    return current_test.exchange(test, std::memory_order_acq_rel);
}

int kunit_add_action(kunit* test, kunit_action_t* action, void* ctx) {
    BUG_ON(!test || !action);
    auto* res = knew<kunit_resource>(GFP_KERNEL);
    if (!res)
        return -ENOMEM;
    res->action = action;
    res->ctx = ctx;
    SpinGuard g(test->lock);
    test->resources.push_back(*res);
    return 0;
}

int kunit_add_action_or_reset(kunit* test, kunit_action_t* action, void* ctx) {
    int ret = kunit_add_action(test, action, ctx);
    if (ret)
        action(ctx);
    return ret;
}

void kunit_remove_action(kunit* test, kunit_action_t* action, void* ctx) {
    kdelete(kunit_take_action(test, action, ctx));
}

void kunit_release_action(kunit* test, kunit_action_t* action, void* ctx) {
    kunit_resource* res = kunit_take_action(test, action, ctx);
    if (!res)
        return;
    res->action(res->ctx);
    kdelete(res);
}

void kunit_cleanup(kunit* test) {
    // Popped one at a time and run unlocked: an action may sleep, and may add or release
    // resources of the test; what it adds runs next.
    for (;;) {
        kunit_resource* res;
        {
            SpinGuard g(test->lock);
            if (test->resources.empty())
                break;
            res = &test->resources.back();
            test->resources.pop_back();
        }
        res->action(res->ctx);
        kdelete(res);
    }
}

unsigned kunit_resource_count(kunit* test) {
    SpinGuard g(test->lock);
    return static_cast<unsigned>(test->resources.size());
}

void* kunit_kmalloc_array(kunit* test, size_t n, size_t size, gfp_t gfp) {
    if (size && n > SIZE_MAX / size)
        return nullptr;
    void* data = kmalloc(n * size, gfp);
    if (!data)
        return nullptr;
    if (kunit_add_action_or_reset(test, kfree_action_wrapper, data))
        return nullptr;
    return data;
}

void* kunit_kmalloc(kunit* test, size_t size, gfp_t gfp) {
    return kunit_kmalloc_array(test, 1, size, gfp);
}

void* kunit_kzalloc(kunit* test, size_t size, gfp_t gfp) {
    void* p = kunit_kmalloc(test, size, gfp);
    if (p)
        std::memset(p, 0, size);
    return p;
}

void* kunit_kcalloc(kunit* test, size_t n, size_t size, gfp_t gfp) {
    void* p = kunit_kmalloc_array(test, n, size, gfp);
    if (p)
        std::memset(p, 0, n * size);
    return p;
}

void kunit_kfree(kunit* test, const void* ptr) {
    if (!ptr)
        return;
    kunit_release_action(test, kfree_action_wrapper, const_cast<void*>(ptr));
}

}  // namespace kshim
