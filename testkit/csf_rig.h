// A test-side "driver" for the CSG/CS engine: boots the MCU, initialises the GLB interface like
// panthor, maps a GPU VM in AS 1, allocates ring buffers, user-I/O pages and suspend buffers, and
// programs CSG/CS slots the way panthor's scheduler does (docs/hw/csf/fw-interfaces.md).
#pragma once
#include <initializer_list>

#include "hw/csf/cs_isa.h"
#include "hw/csf/regs/exceptions.h"
#include "mock_hw/cs_engine.h"
#include "testkit/mock_gpu_helpers.h"

namespace mock_hw::testing {

namespace cs = panthor::cs;

class CsfRig {
public:
    // Needs only a runtime to wait in, so tests and benchmarks share it.
    explicit CsfRig(kshim::Runtime& rt, GpuConfig cfg = {}) : rt_(rt), fw(default_fw_image()), gpu(cfg), d{gpu} {}

    // Runs the world until pred holds (virtual time in simulated mode); false on timeout.
    bool wait(const std::function<bool()>& pred, kshim::ktime_t timeout = 100 * NSEC_PER_MSEC) {
        return rt_.run_until(pred, timeout);
    }

    // Host accesses to memory the GPU also touches go under the Gpu lock, which stands in for the
    // barriers and MMIO ordering of a real driver (and keeps real-mode runs TSan-clean).
    template <typename F>
    auto locked(F f) {
        kshim::SpinGuard g(gpu.lock());
        return f();
    }

    // panthor_fw_init + glb init; returns false if the boot failed.
    bool boot(u32 progress_timer = 0x271000, u64 core_mask = 0) {
        d.w64(L2_PWRON, 1);
        if (!as_enable(d, 0, fw.pt.root_pa(), waiter()))
            return false;
        d.w(JOB_INT_MASK, ~0u);
        d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
        if (!wait([&] { return d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF; }))
            return false;
        d.w(JOB_INT_CLEAR, JOB_INT_GLOBAL_IF);
        locked([&] {
            auto* in = glb_in();
            in->core_en_mask = core_mask ? core_mask : gpu.config().id.shader_present;
            in->progress_timer = progress_timer;
            in->ack_irq_mask = 0x0400050E;
        });
        toggle_glb(GLB_CFG_ALLOC_EN | GLB_CFG_PROGRESS_TIMER);
        if (!wait([&] {
                return locked([&] {
                    return ((glb_in()->req ^ glb_out()->ack) & (GLB_CFG_ALLOC_EN | GLB_CFG_PROGRESS_TIMER)) == 0;
                });
            }))
            return false;
        return as_enable(d, 1, vm.root_pa(), waiter());
    }

    // ---- memory ----
    // Zeroed memory mapped in the GPU VM (AS 1) with `attrs` (read/write/execute by default);
    // returns its VA.
    u64 gpu_alloc(size_t bytes, u8** host = nullptr, u64 attrs = kPteRw) {
        auto p = std::make_unique<PhysPages>(bytes);
        const u64 va = next_va_;
        vm.prealloc(va, (bytes + 0xFFF) & ~0xFFFull);
        locked([&] { vm.map_range(va, p->pa(), (bytes + 0xFFF) & ~0xFFFull, attrs); });
        next_va_ += ((bytes + 0xFFFF) & ~0xFFFFull) + 0x10000;
        if (host)
            *host = p->ptr();
        mem_.push_back({va, std::move(p)});
        return va;
    }
    template <typename T = u8>
    T* host(u64 va) {
        for (auto& m : mem_)
            if (va >= m.va && va < m.va + m.p->size())
                return reinterpret_cast<T*>(m.p->ptr() + (va - m.va));
        return nullptr;
    }
    // Memory in the MCU VM (AS 0), for user-I/O pages and suspend buffers.
    u32 mcu_alloc(size_t bytes, u8** host = nullptr) {
        auto p = std::make_unique<PhysPages>(bytes);
        const u32 va = next_mcu_va_;
        fw.pt.prealloc(va, (bytes + 0xFFF) & ~0xFFFull);
        locked([&] { fw.pt.map_range(va, p->pa(), (bytes + 0xFFF) & ~0xFFFull, kPteRw | kPteXn); });
        next_mcu_va_ += static_cast<u32>((bytes + 0xFFFF) & ~0xFFFFull);
        if (host)
            *host = p->ptr();
        mcu_mem_.push_back(std::move(p));
        return va;
    }
    u64 shader(MockShader::Kind kind, u64 duration_ns, u64 addr = 0, u64 value = 0, u32 heap_chunks = 0) {
        MockShader* sh;
        const u64 va = gpu_alloc(sizeof(MockShader), reinterpret_cast<u8**>(&sh));
        kshim::SpinGuard g(gpu.lock());
        *sh = MockShader{};
        sh->kind = kind;
        sh->duration_ns = duration_ns;
        sh->addr = addr;
        sh->value = value;
        sh->heap_chunks = heap_chunks;
        return va;
    }
    // A buffer holding `instrs`; returns its VA.
    u64 buffer(std::initializer_list<u64> instrs) {
        u8* h;
        const u64 va = gpu_alloc(instrs.size() * 8 + 8, &h);
        locked([&] { memcpy(h, instrs.begin(), instrs.size() * 8); });
        return va;
    }

    // ---- queues ----
    struct Queue {
        u64 ring_va = 0;
        u64* ring = nullptr;
        u32 size = 0;
        u32 io_va = 0;
        panthor_fw_ringbuf_input_iface* in = nullptr;
        panthor_fw_ringbuf_output_iface* out = nullptr;
    };
    Queue make_queue(u32 size = 4096) {
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
    void push(Queue& q, std::initializer_list<u64> instrs) {
        kshim::SpinGuard g(gpu.lock());
        for (u64 i : instrs) {
            q.ring[(q.in->insert % q.size) / 8] = i;
            q.in->insert += 8;
        }
    }

    // ---- interface blocks ----
    panthor_fw_global_control_iface* glb_ctrl() {
        return fw.host<panthor_fw_global_control_iface>(CSF_MCU_SHARED_REGION_START);
    }
    panthor_fw_global_input_iface* glb_in() { return fw.host<panthor_fw_global_input_iface>(glb_ctrl()->input_va); }
    panthor_fw_global_output_iface* glb_out() { return fw.host<panthor_fw_global_output_iface>(glb_ctrl()->output_va); }
    panthor_fw_csg_control_iface* csg_ctrl(u32 s) {
        return fw.host<panthor_fw_csg_control_iface>(CSF_MCU_SHARED_REGION_START + CSF_GROUP_CONTROL_OFFSET +
                                                     s * glb_ctrl()->group_stride);
    }
    panthor_fw_csg_input_iface* csg_in(u32 s) { return fw.host<panthor_fw_csg_input_iface>(csg_ctrl(s)->input_va); }
    panthor_fw_csg_output_iface* csg_out(u32 s) { return fw.host<panthor_fw_csg_output_iface>(csg_ctrl(s)->output_va); }
    panthor_fw_cs_control_iface* cs_ctrl(u32 s, u32 c) {
        const u32 va = CSF_MCU_SHARED_REGION_START + CSF_GROUP_CONTROL_OFFSET + s * glb_ctrl()->group_stride +
                       CSF_STREAM_CONTROL_OFFSET + c * csg_ctrl(s)->stream_stride;
        return fw.host<panthor_fw_cs_control_iface>(va);
    }
    panthor_fw_cs_input_iface* cs_in(u32 s, u32 c) {
        return fw.host<panthor_fw_cs_input_iface>(cs_ctrl(s, c)->input_va);
    }
    panthor_fw_cs_output_iface* cs_out(u32 s, u32 c) {
        return fw.host<panthor_fw_cs_output_iface>(cs_ctrl(s, c)->output_va);
    }

    void toggle_glb(u32 bits) {
        locked([&] {
            auto* in = glb_in();
            in->req = (in->req & ~bits) | ((glb_out()->ack ^ bits) & bits);
        });
        d.w(CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
    }
    void ring_csg(u32 slot) {
        locked([&] { glb_in()->doorbell_req ^= 1u << slot; });
        d.w(CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
    }
    // Kernel-side CS doorbell: toggle the CSG doorbell_req bit, then ring the CSG doorbell.
    void ring_cs(u32 slot, u32 cs) {
        locked([&] { csg_in(slot)->doorbell_req ^= 1u << cs; });
        ring_csg(slot);
    }

    // panthor's "program a CS slot".
    void program_cs(u32 slot, u32 cs, Queue& q, u32 prio = 0) {
        kshim::SpinGuard g(gpu.lock());
        auto* in = cs_in(slot, cs);
        q.in->extract = q.out->extract;
        in->ringbuf_base = q.ring_va;
        in->ringbuf_size = q.size;
        in->ringbuf_input = q.io_va;
        in->ringbuf_output = q.io_va + 0x1000;
        in->config = CS_CONFIG_PRIORITY(prio) | CS_CONFIG_DOORBELL(slot + 1);
        in->ack_irq_mask = ~0u;
        const u32 mask = CS_IDLE_SYNC_WAIT | CS_IDLE_EMPTY | CS_STATE_MASK | CS_EXTRACT_EVENT;
        in->req = (in->req & ~mask) | ((CS_IDLE_SYNC_WAIT | CS_IDLE_EMPTY | CS_STATE_START | CS_EXTRACT_EVENT) & mask);
        csg_in(slot)->doorbell_req ^= 1u << cs;
    }
    // panthor's "program a CSG slot" + state request + ring; returns the suspend buffer MCU VA.
    u32 start_group(u32 slot, u32 prio = 15, u32 state = CSG_STATE_START, u32 suspend_buf = 0) {
        if (!suspend_buf)
            suspend_buf = mcu_alloc(locked([&] { return csg_ctrl(slot)->suspend_size; }));
        locked([&] {
            auto* in = csg_in(slot);
            in->allow_compute = in->allow_fragment = gpu.config().id.shader_present;
            in->allow_other = 1;
            in->endpoint_req =
                CSG_EP_REQ_COMPUTE(4) | CSG_EP_REQ_FRAGMENT(4) | CSG_EP_REQ_TILER(1) | CSG_EP_REQ_PRIORITY(prio);
            in->config = 1;  // AS 1
            in->suspend_buf = suspend_buf;
            in->ack_irq_mask = ~0u;
            in->req = (in->req & ~CSG_STATE_MASK) | state;
            in->req =
                (in->req & ~CSG_ENDPOINT_CONFIG) | ((csg_out(slot)->ack ^ CSG_ENDPOINT_CONFIG) & CSG_ENDPOINT_CONFIG);
        });
        ring_csg(slot);
        return suspend_buf;
    }
    void set_state(u32 slot, u32 state) {
        locked([&] { csg_in(slot)->req = (csg_in(slot)->req & ~CSG_STATE_MASK) | state; });
        ring_csg(slot);
    }
    bool state_acked(u32 slot) {
        return locked([&] { return ((csg_in(slot)->req ^ csg_out(slot)->ack) & CSG_STATE_MASK) == 0; });
    }
    void toggle_csg(u32 slot, u32 bits) {
        locked([&] {
            auto* in = csg_in(slot);
            in->req = (in->req & ~bits) | ((csg_out(slot)->ack ^ bits) & bits);
        });
        ring_csg(slot);
    }
    // CSG event bits pending (ack != req).
    u32 csg_events(u32 slot) {
        return locked([&] { return (csg_in(slot)->req ^ csg_out(slot)->ack) & CSG_EVT_MASK; });
    }
    u32 cs_events(u32 slot, u32 cs) {
        return locked([&] { return (cs_in(slot, cs)->req ^ cs_out(slot, cs)->ack) & CS_EVT_MASK; });
    }
    // Host acks CS events (copy ack into req) and CSG events.
    void ack_cs(u32 slot, u32 cs, u32 bits) {
        locked([&] {
            auto* in = cs_in(slot, cs);
            in->req = (in->req & ~bits) | (cs_out(slot, cs)->ack & bits);
            csg_in(slot)->cs_irq_ack = csg_out(slot)->cs_irq_req;
        });
    }
    void ack_csg(u32 slot, u32 bits) {
        locked([&] {
            auto* in = csg_in(slot);
            in->req = (in->req & ~bits) | (csg_out(slot)->ack & bits);
        });
    }
    u64 read64(u64 va) {
        return locked([&] { return *host<u64>(va); });
    }

private:
    struct Mem {
        u64 va;
        std::unique_ptr<PhysPages> p;
    };

public:
    // Memory and page tables are declared before the Gpu so that they outlive it (real mode: a
    // hardware event may still run until the Gpu is destroyed).
    WaitFn waiter() {
        return [this](const std::function<bool()>& p) { return wait(p); };
    }
    kshim::Runtime& rt_;
    FwLoader fw;
    PageTables vm;
    std::vector<Mem> mem_;
    std::vector<std::unique_ptr<PhysPages>> mcu_mem_;
    Gpu gpu;
    Drv d;

private:
    u64 next_va_ = 0x1000000;
    u32 next_mcu_va_ = 0x05000000;
};

}  // namespace mock_hw::testing
