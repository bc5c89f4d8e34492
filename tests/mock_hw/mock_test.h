// The fixture of the mock GPU tests, over the helpers of testkit/mock_gpu_helpers.h.
#pragma once
#include <gtest/gtest.h>

#include "testkit/mock_gpu_helpers.h"
#include "tests/support/kernel_test.h"

namespace mock_hw::testing {

class MockHwTest : public kshim::testing::KernelTest {
public:
    // For test-side helpers (csf_rig.h).

protected:
    // Waits (virtual time) for pred; false on timeout.
    bool wait(const std::function<bool()>& pred, kshim::ktime_t timeout = 100 * NSEC_PER_MSEC) {
        return run_until(pred, timeout);
    }
    // panthor_mmu_as_enable: program TRANSTAB/MEMATTR/TRANSCFG and UPDATE, then wait_ready.
    void enable_as(Drv& d, u32 as, u64 transtab, u64 transcfg = kTranscfg48, u64 memattr = kMemattr) {
        ASSERT_TRUE(as_enable(
            d, as, transtab, [this](const std::function<bool()>& p) { return wait(p); }, transcfg, memattr));
    }
    void as_command(Drv& d, u32 as, u32 cmd) {
        ASSERT_TRUE(wait([&] { return !(d.r(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); }));
        d.w(AS_COMMAND(as), cmd);
        ASSERT_TRUE(wait([&] { return !(d.r(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); }));
    }
    // LOCK a region covering [va, va + size) (panthor's lock_region encoding), then `cmd`.
    void lock_and(Drv& d, u32 as, u64 va, u64 size, u32 cmd) {
        u64 region_width = 15;
        while ((u64{1} << region_width) < size)
            region_width++;
        d.w64(AS_LOCKADDR(as), (va & ~((u64{1} << region_width) - 1)) | (region_width - 1));
        as_command(d, as, AS_COMMAND_LOCK);
        as_command(d, as, cmd);
    }
};

}  // namespace mock_hw::testing
