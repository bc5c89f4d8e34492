// Mirrors drivers/base/devres.c (devm_add_action, devres_release_all).
#include "kernel_shim/devres.h"

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"

namespace kshim {

struct DevresNode {
    std::function<void()> action;
    DevresNode* prev = nullptr;  // registered before this one
};

struct DevresList {
    // Protects tail and count: a device's resources may be registered from several tasks
    // (probe, a work it started), as the kernel's dev->devres_lock allows.
    SpinLock lock{"dev->devres_lock"};
    DevresNode* tail = nullptr;
    unsigned count = 0;
};

namespace {
// The list is made on first use; probe registers its first resource before anything could
// run concurrently on the device, so the creation itself needs no lock.
DevresList* devres_list_get(Device* dev) {
    if (!dev->devres)
        dev->devres = knew<DevresList>(GFP_KERNEL);
    return dev->devres;
}

// Takes `action` only on success, so the caller still has it when registering fails.
int devres_add(Device* dev, std::function<void()>& action) {
    if (should_fail_alloc("devres", GFP_KERNEL))
        return -ENOMEM;
    DevresList* list = devres_list_get(dev);
    if (!list)
        return -ENOMEM;
    auto* node = knew<DevresNode>(GFP_KERNEL);
    if (!node)
        return -ENOMEM;
    node->action = std::move(action);
    SpinGuard g(list->lock);
    node->prev = list->tail;
    list->tail = node;
    list->count++;
    return 0;
}
}  // namespace

int devm_add_action(Device* dev, std::function<void()> action) {
    return devres_add(dev, action);
}

int devm_add_action_or_reset(Device* dev, std::function<void()> action) {
    int ret = devres_add(dev, action);
    if (ret)
        action();
    return ret;
}

void devres_release_all(Device* dev) {
    DevresList* list = dev->devres;
    if (!list)
        return;
    // One at a time, newest first; an action may register or release others of this device.
    for (;;) {
        DevresNode* node;
        {
            SpinGuard g(list->lock);
            node = list->tail;
            if (!node)
                break;
            list->tail = node->prev;
            list->count--;
        }
        node->action();
        kdelete(node);
    }
    dev->devres = nullptr;
    kdelete(list);
}

unsigned devres_count(const Device* dev) {
    DevresList* list = dev->devres;
    if (!list)
        return 0;
    SpinGuard g(list->lock);
    return list->count;
}

}  // namespace kshim
