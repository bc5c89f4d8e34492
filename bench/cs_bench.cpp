// The mock GPU's command-stream engine (issue #9 benchmarks), simulated mode, release preset.
//
//   BM_CsInterpreter     one iteration = one ring submission running a MOVE/MOVE/ADD/BRANCH loop of
//                        ~100,000 executed instructions to completion (items/s = instructions/s;
//                        target >= 20M/s)
//   BM_CsgStartSuspend   one iteration = a CSG slot START then SUSPEND round trip (counter
//                        virt_ns = virtual time per round trip)
//
// The driver side is a bench-local copy of the few register sequences of tests/mock_hw/csf_rig.h
// (CsfRig needs a live GoogleTest fixture for its waits); the page-table, firmware-loader and
// register helpers of tests/mock_hw/mock_test.h are reused as they are.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <vector>

#include "kernel_shim/runtime.h"
#include "mock_hw/cs_engine.h"
#include "panthor/cs_isa.h"
#include "tests/mock_hw/mock_test.h"

using namespace mock_hw;
using namespace mock_hw::testing;
namespace cs = panthor::cs;

namespace {

constexpr kshim::ktime_t kTimeout = 100 * NSEC_PER_MSEC;

// Boots the MCU, initialises GLB, maps a GPU VM in AS 1 and programs CSG/CS slots like panthor
// (the sequences of CsfRig). Memory and tables are declared before the Gpu so they outlive it.
class BenchDriver {
public:
    explicit BenchDriver(kshim::Runtime& rt) : rt_(rt), fw(default_fw_image()), d{gpu} {}

    bool wait(const std::function<bool()>& pred, kshim::ktime_t timeout = kTimeout) { return rt_.run_until(pred, timeout); }
    template <typename F>
    auto locked(F f) {
        kshim::SpinGuard g(gpu.lock());
        return f();
    }

    bool boot() {
        d.w64(L2_PWRON, 1);
        if (!enable_as(0, fw.pt.root_pa())) return false;
        d.w(JOB_INT_MASK, ~0u);
        d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
        if (!wait([&] { return d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF; })) return false;
        d.w(JOB_INT_CLEAR, JOB_INT_GLOBAL_IF);
        const u32 bits = GLB_CFG_ALLOC_EN | GLB_CFG_PROGRESS_TIMER;
        locked([&] {
            auto* in = glb_in();
            in->core_en_mask = gpu.config().id.shader_present;
            in->progress_timer = 0x271000;
            in->ack_irq_mask = 0x0400050E;
            in->req = (in->req & ~bits) | ((glb_out()->ack ^ bits) & bits);
        });
        d.w(CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
        if (!wait([&] { return locked([&] { return ((glb_in()->req ^ glb_out()->ack) & bits) == 0; }); })) return false;
        return enable_as(1, vm.root_pa());
    }

    // Zeroed memory mapped in AS 1 (GPU VM) or AS 0 (MCU VM); returns its VA.
    u64 gpu_alloc(size_t bytes, u8** host) {
        const u64 size = (bytes + 0xFFF) & ~0xFFFull;
        auto& p = mem_.emplace_back(std::make_unique<PhysPages>(bytes));
        const u64 va = next_va_;
        vm.prealloc(va, size);
        locked([&] { vm.map_range(va, p->pa(), size); });
        next_va_ += size + 0x10000;
        *host = p->ptr();
        return va;
    }
    u32 mcu_alloc(size_t bytes, u8** host = nullptr) {
        const u64 size = (bytes + 0xFFF) & ~0xFFFull;
        auto& p = mem_.emplace_back(std::make_unique<PhysPages>(bytes));
        const u32 va = next_mcu_va_;
        fw.pt.prealloc(va, size);
        locked([&] { fw.pt.map_range(va, p->pa(), size, kPteRw | kPteXn); });
        next_mcu_va_ += static_cast<u32>((size + 0xFFFF) & ~0xFFFFull);
        if (host) *host = p->ptr();
        return va;
    }

    struct Queue {
        u64 ring_va = 0;
        u64* ring = nullptr;
        u32 size = 0;
        u32 io_va = 0;
        panthor_fw_ringbuf_input_iface* in = nullptr;
        panthor_fw_ringbuf_output_iface* out = nullptr;
    };
    Queue make_queue(u32 size) {
        Queue q;
        q.size = size;
        u8* h;
        q.ring_va = gpu_alloc(size, &h);
        q.ring = reinterpret_cast<u64*>(h);
        u8* io;
        q.io_va = mcu_alloc(0x2000, &io);
        q.in = reinterpret_cast<panthor_fw_ringbuf_input_iface*>(io);
        q.out = reinterpret_cast<panthor_fw_ringbuf_output_iface*>(io + 0x1000);
        return q;
    }
    // Writes instructions at CS_INSERT (wrapping) and advances it (no doorbell).
    void push(Queue& q, const std::vector<u64>& instrs) {
        kshim::SpinGuard g(gpu.lock());
        for (u64 i : instrs) {
            q.ring[(q.in->insert % q.size) / 8] = i;
            q.in->insert += 8;
        }
    }

    // panthor's "program a CS slot" (doorbell = slot + 1).
    void program_cs(u32 slot, u32 c, Queue& q) {
        kshim::SpinGuard g(gpu.lock());
        auto* in = cs_in(slot, c);
        q.in->extract = q.out->extract;
        in->ringbuf_base = q.ring_va;
        in->ringbuf_size = q.size;
        in->ringbuf_input = q.io_va;
        in->ringbuf_output = q.io_va + 0x1000;
        in->config = CS_CONFIG_PRIORITY(0) | CS_CONFIG_DOORBELL(slot + 1);
        in->ack_irq_mask = ~0u;
        const u32 mask = CS_IDLE_SYNC_WAIT | CS_IDLE_EMPTY | CS_STATE_MASK | CS_EXTRACT_EVENT;
        in->req = (in->req & ~mask) | ((CS_IDLE_SYNC_WAIT | CS_IDLE_EMPTY | CS_STATE_START | CS_EXTRACT_EVENT) & mask);
        csg_in(slot)->doorbell_req ^= 1u << c;
    }
    // panthor's "program a CSG slot" + state request + ring.
    void start_group(u32 slot, u32 suspend_buf) {
        locked([&] {
            auto* in = csg_in(slot);
            in->allow_compute = in->allow_fragment = gpu.config().id.shader_present;
            in->allow_other = 1;
            in->endpoint_req = CSG_EP_REQ_COMPUTE(4) | CSG_EP_REQ_FRAGMENT(4) | CSG_EP_REQ_TILER(1) | CSG_EP_REQ_PRIORITY(15);
            in->config = 1;  // AS 1
            in->suspend_buf = suspend_buf;
            in->ack_irq_mask = ~0u;
            in->req = (in->req & ~CSG_STATE_MASK) | CSG_STATE_START;
            in->req = (in->req & ~CSG_ENDPOINT_CONFIG) | ((csg_out(slot)->ack ^ CSG_ENDPOINT_CONFIG) & CSG_ENDPOINT_CONFIG);
        });
        ring_csg(slot);
    }
    void set_state(u32 slot, u32 state) {
        locked([&] { csg_in(slot)->req = (csg_in(slot)->req & ~CSG_STATE_MASK) | state; });
        ring_csg(slot);
    }
    bool state_acked(u32 slot) {
        return locked([&] { return ((csg_in(slot)->req ^ csg_out(slot)->ack) & CSG_STATE_MASK) == 0; });
    }
    u32 suspend_size(u32 slot) {
        return locked([&] { return csg_ctrl(slot)->suspend_size; });
    }

private:
    bool enable_as(u32 as, u64 transtab) {
        auto idle = [&] { return !(d.r(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); };
        if (!wait(idle)) return false;
        d.w64(AS_TRANSTAB(as), transtab);
        d.w64(AS_MEMATTR(as), kMemattr);
        d.w64(AS_TRANSCFG(as), kTranscfg48);
        d.w(AS_COMMAND(as), AS_COMMAND_UPDATE);
        return wait(idle);
    }
    void ring_csg(u32 slot) {
        locked([&] { glb_in()->doorbell_req ^= 1u << slot; });
        d.w(CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
    }
    panthor_fw_global_control_iface* glb_ctrl() { return fw.host<panthor_fw_global_control_iface>(CSF_MCU_SHARED_REGION_START); }
    panthor_fw_global_input_iface* glb_in() { return fw.host<panthor_fw_global_input_iface>(glb_ctrl()->input_va); }
    panthor_fw_global_output_iface* glb_out() { return fw.host<panthor_fw_global_output_iface>(glb_ctrl()->output_va); }
    panthor_fw_csg_control_iface* csg_ctrl(u32 s) {
        return fw.host<panthor_fw_csg_control_iface>(CSF_MCU_SHARED_REGION_START + CSF_GROUP_CONTROL_OFFSET + s * glb_ctrl()->group_stride);
    }
    panthor_fw_csg_input_iface* csg_in(u32 s) { return fw.host<panthor_fw_csg_input_iface>(csg_ctrl(s)->input_va); }
    panthor_fw_csg_output_iface* csg_out(u32 s) { return fw.host<panthor_fw_csg_output_iface>(csg_ctrl(s)->output_va); }
    panthor_fw_cs_input_iface* cs_in(u32 s, u32 c) {
        const u32 va = CSF_MCU_SHARED_REGION_START + CSF_GROUP_CONTROL_OFFSET + s * glb_ctrl()->group_stride +
                       CSF_STREAM_CONTROL_OFFSET + c * csg_ctrl(s)->stream_stride;
        return fw.host<panthor_fw_cs_input_iface>(fw.host<panthor_fw_cs_control_iface>(va)->input_va);
    }

    kshim::Runtime& rt_;

public:
    FwLoader fw;
    PageTables vm;

private:
    std::vector<std::unique_ptr<PhysPages>> mem_;

public:
    Gpu gpu;
    Drv d;

private:
    u64 next_va_ = 0x1000000;
    u32 next_mcu_va_ = 0x05000000;
};

// r2 = loops; do { r3 = ..; r4 = ..; r2 -= 1 } while (r2 != 0): 1 + 4 * loops instructions.
constexpr u32 kLoops = 25'000;
constexpr u64 kInstrsPerRun = 1 + 4ull * kLoops;

void BM_CsInterpreter(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    u64 executed = 0;
    {
        BenchDriver drv(rt);
        if (!drv.boot()) return state.SkipWithError("MCU boot failed");
        auto q = drv.make_queue(4096);
        drv.program_cs(0, 0, q);
        drv.start_group(0, drv.mcu_alloc(drv.suspend_size(0)));
        if (!drv.wait([&] { return drv.state_acked(0); })) return state.SkipWithError("CSG START not acked");
        const std::vector<u64> prog = {cs::move32(2, kLoops), cs::move32(3, 0x1234), cs::move48(4, 0xABCD0000ull),
                                       cs::add_imm32(2, 2, -1), cs::branch(cs::NEQUAL, 2, -4)};
        const u64 before = drv.gpu.engine().instructions_executed();
        for (auto _ : state) {
            drv.push(q, prog);
            drv.d.w(CSF_DOORBELL(1), 1);
            if (!drv.wait([&] { return drv.locked([&] { return q.out->extract == q.in->insert; }); }, kshim::NSEC_PER_SEC)) {
                state.SkipWithError("stream did not complete");
                break;
            }
        }
        executed = drv.gpu.engine().instructions_executed() - before;
        if (executed != kInstrsPerRun * state.iterations() && !state.error_occurred())
            state.SkipWithError("executed instruction count differs from the program's");
    }
    rt.run_until_idle();
    state.SetItemsProcessed(static_cast<int64_t>(executed));
    state.counters["instrs_per_run"] = static_cast<double>(kInstrsPerRun);
}
BENCHMARK(BM_CsInterpreter)->Unit(benchmark::kMillisecond);

void BM_CsgStartSuspend(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    kshim::ktime_t virt = 0;
    {
        BenchDriver drv(rt);
        if (!drv.boot()) return state.SkipWithError("MCU boot failed");
        auto q = drv.make_queue(4096);
        const u32 sb = drv.mcu_alloc(drv.suspend_size(0));
        for (auto _ : state) {
            const kshim::ktime_t t0 = kshim::ktime_get();
            drv.program_cs(0, 0, q);
            drv.start_group(0, sb);
            bool ok = drv.wait([&] { return drv.state_acked(0); });
            drv.set_state(0, CSG_STATE_SUSPEND);
            ok = ok && drv.wait([&] { return drv.state_acked(0); });
            virt += kshim::ktime_get() - t0;
            if (!ok) {
                state.SkipWithError("CSG state request not acked");
                break;
            }
        }
    }
    rt.run_until_idle();
    state.counters["virt_ns"] = benchmark::Counter(static_cast<double>(virt), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CsgStartSuspend)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
