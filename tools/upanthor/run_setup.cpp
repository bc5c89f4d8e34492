// `upanthor run`: creating the scenario's clients, VMs, BOs, heaps, groups and syncobjs (run_state.h).
#include <cerrno>
#include <cstring>

#include "drm/drm_file.h"
#include "panthor/panthor_drv.h"
#include "tools/upanthor/run_state.h"

namespace upanthor::run_detail {

u8* Runner::vm_alloc(size_t vm, u64 size, u64* va) {
    VmRt& v = vms_[vm];
    const u64 at = align_up(v.used, 64);
    if (at + size > v.bo.size)
        return nullptr;
    v.used = at + size;
    *va = kRunnerVa + at;
    return v.cpu + at;
}

int Runner::setup(upanthor::host::Machine& m) {
    int ret = m.probe();
    if (ret)
        return fail_setup(ret == -ENOENT ? "panthor_probe (no firmware image: build the target upanthor_firmware)"
                                         : "panthor_probe (see the driver's log above)",
                          ret);
    ptdev_ = panthor::panthor_from_pdev(m.pdev());

    for (const sc::Client& cl : s_.clients) {
        ClientRt& c = clients_.emplace_back();
        ret = m.open_file(&c.file);
        if (ret)
            return fail_setup("drm_open for client '" + cl.name + "'", ret);
        c.be = std::make_unique<umd::DrmFileBackend>(c.file);
        if (cl.cap_sys_nice)
            c.be->creds().cap_effective = kshim::cap_raise(kshim::CAP_EMPTY_SET, kshim::CAP_SYS_NICE);
        auto r = umd::PanthorClient::open(*c.be);
        if (!r.ok())
            return fail_setup("PanthorClient::open for client '" + cl.name + "'", r.error());
        c.c = std::move(*r);
    }
    for (const sc::Vm& vm : s_.vms) {
        umd::PanthorClient& c = *clients_[vm.client].c;
        VmRt& v = vms_.emplace_back();
        v.client = vm.client;
        auto id = c.vm_create();
        if (!id.ok())
            return fail_setup("VM_CREATE '" + vm.name + "'", id.error());
        v.id = id->id;
        auto bo = c.bo_create(kRunnerSize);
        if (!bo.ok())
            return fail_setup("runner BO for VM '" + vm.name + "'", bo.error());
        v.bo = *bo;
        auto cpu = c.bo_mmap(v.bo.handle, v.bo.size);
        if (!cpu.ok())
            return fail_setup("mmap of the runner BO", cpu.error());
        v.cpu = static_cast<u8*>(*cpu);
        std::memset(v.cpu, 0, v.bo.size);
        if (umd::Status st = c.vm_map(v.id, v.bo.handle, kRunnerVa, v.bo.size); !st)
            return fail_setup("VM_BIND of the runner BO", st.error());
    }
    for (const sc::Bo& b : s_.bos) {
        umd::PanthorClient& c = client_of_vm(b.vm);
        VmRt& v = vms_[b.vm];
        BoRt& r = bos_.emplace_back();
        auto bo = c.bo_create(b.size);
        if (!bo.ok())
            return fail_setup(s_.file + ":" + std::to_string(b.loc.line) + ": BO_CREATE '" + b.name + "'", bo.error());
        r.bo = *bo;
        auto cpu = c.bo_mmap(r.bo.handle, r.bo.size);
        if (!cpu.ok())
            return fail_setup("mmap of BO '" + b.name + "'", cpu.error());
        r.cpu = static_cast<u8*>(*cpu);
        const u32 word = b.pattern.value_or(0);
        for (u64 off = 0; off + 4 <= r.bo.size; off += 4)
            std::memcpy(r.cpu + off, &word, 4);
        for (const sc::BoValue& val : b.values)
            std::memcpy(r.cpu + val.offset, &val.value, 8);
        if (b.va) {
            r.va = *b.va;
        } else {
            r.va = v.next_va;
            v.next_va = align_up(v.next_va + r.bo.size, 0x10000);
        }
        (void)c.bo_set_label(r.bo.handle, b.name.c_str());
        if (umd::Status st = c.vm_map(v.id, r.bo.handle, r.va, r.bo.size); !st)
            return fail_setup(s_.file + ":" + std::to_string(b.loc.line) + ": VM_BIND of BO '" + b.name + "'",
                              st.error());
    }
    for (const sc::TilerHeap& h : s_.heaps) {
        umd::TilerHeapDesc d;
        d.vm_id = vms_[h.vm].id;
        d.initial_chunk_count = h.initial_chunks;
        d.chunk_size = h.chunk_size;
        d.max_chunks = h.max_chunks;
        d.target_in_flight = h.target_in_flight;
        auto r = client_of_vm(h.vm).tiler_heap_create(d);
        if (!r.ok())
            return fail_setup(s_.file + ":" + std::to_string(h.loc.line) + ": TILER_HEAP_CREATE '" + h.name + "'",
                              r.error());
        heaps_.push_back(*r);
        heap_seeded_.push_back(false);
    }
    for (const sc::Group& g : s_.groups) {
        umd::PanthorClient& c = client_of_vm(g.vm);
        auto& insts = groups_.emplace_back();
        umd::GroupDesc d;
        d.vm_id = vms_[g.vm].id;
        d.priority = static_cast<u8>(g.priority);
        for (const sc::Queue& q : g.queues)
            d.queues.push_back({.priority = q.priority, .ringbuf_size = q.ring_size});
        for (u32 i = 0; i < g.instances; i++) {
            GroupInst& gi = insts.emplace_back();
            auto h = c.group_create(d);
            if (!h.ok())
                return fail_setup(s_.file + ":" + std::to_string(g.loc.line) + ": GROUP_CREATE '" + g.name +
                                      "' instance " + std::to_string(i),
                                  h.error());
            gi.handle = *h;
            for (size_t q = 0; q < g.queues.size(); q++) {
                u64 va = 0;
                if (!vm_alloc(g.vm, 16, &va))
                    return fail_setup("runner BO full (progress objects)", -ENOSPC);
                gi.progress_va.push_back(va);
            }
        }
    }
    for (const sc::Syncobj& so : s_.syncobjs) {
        auto h = clients_[so.client].c->syncobj_create();
        if (!h.ok())
            return fail_setup("SYNCOBJ_CREATE '" + so.name + "'", h.error());
        syncobjs_.push_back(*h);
    }
    return 0;
}

}  // namespace upanthor::run_detail
