// Mirrors drivers/base/devres.c (the action subset): resources tied to a device's binding.
// devm_add_action registers a release action; devres_release_all runs every action in reverse
// order of registration (what the driver core does after a failed probe or on unbind), so a probe
// that fails half-way leaves nothing behind.
#pragma once
#include <functional>

#include "kernel_shim/device.h"

namespace kshim {

// 0, or -ENOMEM (allocation failure injection applies: cache "devres").
int devm_add_action(Device* dev, std::function<void()> action);
// As devm_add_action, but runs `action` at once when registering fails.
int devm_add_action_or_reset(Device* dev, std::function<void()> action);
// Runs the actions in reverse order and frees the list.
void devres_release_all(Device* dev);
// Number of registered actions (tests).
unsigned devres_count(const Device* dev);

}  // namespace kshim
