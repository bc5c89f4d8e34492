// Mirrors drivers/clk/clk.c (the consumer API's counting and its WARNs) and
// drivers/regulator/core.c (enable counting, voltage): no clock tree, no regulator constraints.
#include "kernel_shim/clk.h"

#include <cstring>

#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/platform_internal.h"
#include "kernel_shim/report.h"
#include "kernel_shim/spinlock.h"

namespace kshim {
namespace {

// Protects the fields of every Clk and Regulator, as the kernel's global enable_lock does for
// clocks. Prepare, rate and regulator changes may sleep in the kernel (prepare_lock, the
// regulator's mutex), so those paths say might_sleep() first to catch callers in atomic context.
SpinLock& clk_lock() {
    static SpinLock lock("clk.enable_lock");
    return lock;
}

// Tests store the errno either way round.
int injected_errno(int v) {
    return v > 0 ? -v : v;
}

Clk* clk_lookup(Device* dev, const char* id) {
    auto& clks = platform_state(dev)->clks;
    if (clks.empty())
        return nullptr;
    if (!id)
        return &clks[0];  // a NULL con_id means the node's first clock
    for (Clk& c : clks)
        if (std::strcmp(c.name, id) == 0)
            return &c;
    return nullptr;
}

}  // namespace

Clk* devm_clk_get(Device* dev, const char* id) {
    Clk* clk = clk_lookup(dev, id);
    if (clk)
        return clk;
    dev_err(dev, "clock %s not found", id ? id : "(default)");
    return ERR_PTR<Clk>(-ENOENT);
}

Clk* devm_clk_get_optional(Device* dev, const char* id) {
    return clk_lookup(dev, id);
}

int clk_prepare(Clk* clk) {
    might_sleep();
    if (!clk)
        return 0;
    SpinGuard g(clk_lock());
    clk->prepare_count++;
    return 0;
}

void clk_unprepare(Clk* clk) {
    might_sleep();
    if (!clk)
        return;
    SpinGuard g(clk_lock());
    if (WARN(clk->prepare_count == 0, "%s already unprepared", clk->name))
        return;
    if (WARN(clk->prepare_count == 1 && clk->enable_count > 0, "Unpreparing enabled %s", clk->name))
        return;
    clk->prepare_count--;
}

int clk_enable(Clk* clk) {
    if (!clk)
        return 0;
    SpinGuard g(clk_lock());
    if (WARN(clk->prepare_count == 0, "Enabling unprepared %s", clk->name))
        return -ESHUTDOWN;
    if (clk->fail_next_enable) {
        int err = injected_errno(clk->fail_next_enable);
        clk->fail_next_enable = 0;
        return err;
    }
    clk->enable_count++;
    return 0;
}

void clk_disable(Clk* clk) {
    if (!clk)
        return;
    SpinGuard g(clk_lock());
    if (WARN(clk->enable_count == 0, "%s already disabled", clk->name))
        return;
    clk->enable_count--;
}

int clk_prepare_enable(Clk* clk) {
    int ret = clk_prepare(clk);
    if (ret)
        return ret;
    ret = clk_enable(clk);
    if (ret)
        clk_unprepare(clk);
    return ret;
}

void clk_disable_unprepare(Clk* clk) {
    clk_disable(clk);
    clk_unprepare(clk);
}

unsigned long clk_get_rate(Clk* clk) {
    if (!clk)
        return 0;
    SpinGuard g(clk_lock());
    return clk->rate;
}

int clk_set_rate(Clk* clk, unsigned long rate) {
    might_sleep();
    if (!clk)
        return 0;
    SpinGuard g(clk_lock());
    clk->rate = rate;
    return 0;
}

Regulator* devm_regulator_get(Device* dev, const char* id) {
    for (Regulator& r : platform_state(dev)->regulators)
        if (id && std::strcmp(r.name, id) == 0)
            return &r;
    return ERR_PTR<Regulator>(-ENODEV);
}

int regulator_enable(Regulator* reg) {
    might_sleep();
    SpinGuard g(clk_lock());
    if (reg->fail_next_enable) {
        int err = injected_errno(reg->fail_next_enable);
        reg->fail_next_enable = 0;
        return err;
    }
    reg->enable_count++;
    return 0;
}

int regulator_disable(Regulator* reg) {
    might_sleep();
    SpinGuard g(clk_lock());
    if (WARN(reg->enable_count <= 0, "unbalanced disables for %s", reg->name))
        return -EIO;
    reg->enable_count--;
    return 0;
}

int regulator_is_enabled(Regulator* reg) {
    SpinGuard g(clk_lock());
    return reg->enable_count > 0;
}

int regulator_set_voltage(Regulator* reg, int min_uv, int max_uv) {
    might_sleep();
    if (min_uv <= 0 || min_uv > max_uv)
        return -EINVAL;
    SpinGuard g(clk_lock());
    if (reg->fail_next_set_voltage) {
        int err = injected_errno(reg->fail_next_set_voltage);
        reg->fail_next_set_voltage = 0;
        return err;
    }
    // The lowest voltage the consumer accepts, as a regulator without other consumers picks.
    reg->microvolt = min_uv;
    return 0;
}

int regulator_get_voltage(Regulator* reg) {
    SpinGuard g(clk_lock());
    return reg->microvolt;
}

}  // namespace kshim
