// JobBo: a CPU-mapped panfrost BO in which tests lay out job chains at the BO's GPU VA
// (shared by job_test and gem_test).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "hw/jm/job_desc.h"
#include "kernel_shim/types.h"

namespace panfrost::testing {

using kshim::u32;
using kshim::u64;
using kshim::u8;
namespace desc = panfrost::desc;

// A BO mapped for the CPU in which jobs are laid out at the BO's GPU VA.
struct JobBo {
    u32 handle = 0;
    u64 va = 0;
    u8* cpu = nullptr;
    size_t size = 0;
    size_t used = 0;

    template <typename T>
    T* at(u64 gpu_va) {
        return reinterpret_cast<T*>(cpu + (gpu_va - va));
    }
    desc::JobHeader* header(u64 job) { return at<desc::JobHeader>(job); }
    u64 alloc(size_t n, size_t align = 64) {
        used = (used + align - 1) & ~(align - 1);
        const u64 a = va + used;
        used += n;
        EXPECT_LE(used, size);
        return a;
    }
    // A 64-bit word for a job to write, zeroed.
    u64 slot() {
        const u64 a = alloc(8, 8);
        *at<u64>(a) = 0;
        return a;
    }
    u64 job(u32 type, const void* payload, size_t len, u64 prev) {
        const u64 j = alloc(desc::kJobPayloadOffset + std::max<size_t>(len, 32), 64);
        auto* h = header(j);
        std::memset(h, 0, desc::kJobPayloadOffset + std::max<size_t>(len, 32));
        h->control = desc::job_control(type, 1);
        if (len)
            std::memcpy(cpu + (j - va) + desc::kJobPayloadOffset, payload, len);
        if (prev)
            header(prev)->next = j;
        return j;
    }
    u64 write_value(u64 target, u64 value, u64 prev = 0, u32 type = desc::kWriteValueImmediate64) {
        desc::WriteValuePayload p{};
        p.address = target;
        p.type = type;
        p.immediate = value;
        return job(desc::kJobWriteValue, &p, sizeof(p), prev);
    }
    u64 null_job(u64 prev = 0) { return job(desc::kJobNull, nullptr, 0, prev); }
    u64 value(u64 target) { return *at<u64>(target); }
};

}  // namespace panfrost::testing
