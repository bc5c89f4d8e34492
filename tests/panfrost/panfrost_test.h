// The fixture of the panfrost tests: the mock Mali-G52 booted through the host's Machine (model
// g52, simulated runtime), the driver probed and a DRM file open; register peeks into the mock.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/uaccess.h"
#include "host/machine.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/err.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/pm_runtime.h"
#include "mock_jm/jm_platform.h"
#include "panfrost/panfrost_device.h"
#include "panfrost/panfrost_drv.h"
#include "tests/support/kernel_test.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost::testing {

using namespace drm::uapi;

class PanfrostTest : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        kshim::override_creds(&client_cred);
        upanthor::host::Machine::Options opts;
        opts.model = "g52";
        opts.config.jm = jm_config();
        ASSERT_EQ(upanthor::host::Machine::create(opts, &machine_), 0);
        if (probe_in_setup()) {
            ASSERT_EQ(probe(), 0);
            ASSERT_EQ(machine_->open_file(&file), 0);
        }
    }
    void TearDown() override {
        if (file)
            drm::drm_release(file);
        file = nullptr;
        machine_.reset();
        kshim::revert_creds(nullptr);
        KernelTest::TearDown();
    }

    virtual mock_jm::JmConfig jm_config() const { return {}; }
    virtual bool probe_in_setup() const { return true; }

    int probe() {
        const int ret = machine_->probe();
        pfdev = ret ? nullptr : panfrost_from_pdev(machine_->pdev());
        return ret;
    }

    mock_jm::JmGpu& gpu() { return machine_->jm()->gpu(); }
    kshim::Device* dev() { return machine_->dev(); }
    u32 reg(u32 off) { return gpu().peek32(off).value_or(0xDEADBEEF); }
    u64 reg64(u32 off) { return reg(off) | (static_cast<u64>(reg(off + 4)) << 32); }

    int get_param(u32 param, u64* value, u32 pad = 0) {
        drm_panfrost_get_param args{};
        args.param = param;
        args.pad = pad;
        args.value = 0xAAAA;
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(file, DRM_IOCTL_PANFROST_GET_PARAM, &args);
        if (value)
            *value = args.value;
        return ret;
    }

    // Nothing the driver got from the platform is still held: clocks, supply, IRQ lines.
    void expect_platform_released(const std::string& where) {
        for (const char* id : {"gpu", "bus"}) {
            kshim::Clk* c = kshim::devm_clk_get(dev(), id);
            ASSERT_FALSE(kshim::IS_ERR_OR_NULL(c)) << id;
            EXPECT_EQ(c->enable_count, 0) << id << " " << where;
            EXPECT_EQ(c->prepare_count, 0) << id << " " << where;
        }
        EXPECT_EQ(kshim::devm_regulator_get(dev(), "mali")->enable_count, 0) << where;
        int cookie = 0;
        for (kshim::IrqLine* line : {&gpu().irq_job(), &gpu().irq_mmu(), &gpu().irq_gpu()}) {
            const int ret = kshim::request_irq(
                line, [](int, void*) { return kshim::IRQ_NONE; }, 0, "probe-test", &cookie);
            EXPECT_EQ(ret, 0) << line->name() << " still requested " << where;
            if (!ret)
                kshim::free_irq(line, &cookie);
        }
        EXPECT_FALSE(machine_->probed()) << where;
    }

    bool wait_autosuspend() {
        return run_until([&] { return kshim::pm_runtime_suspended(dev()); }, kshim::NSEC_PER_SEC);
    }

    kshim::cred client_cred = kshim::user_cred();
    std::unique_ptr<upanthor::host::Machine> machine_;
    panfrost_device* pfdev = nullptr;
    drm::drm_file* file = nullptr;
};

}  // namespace panfrost::testing
