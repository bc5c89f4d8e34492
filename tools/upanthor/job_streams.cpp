// `upanthor run`: each scenario job as a command stream in its VM's runner BO (run_state.h).
#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <vector>

#include "tools/upanthor/run_state.h"

#include "hw/csf/mock_fw_formats.h"
#include "umd/cs_asm.h"
#include "umd/cs_builder.h"

namespace upanthor::run_detail {

namespace {

// One RUN_COMPUTE of a split dispatch: `workgroups` workgroups from `first`, taking `duration_ns`.
struct ComputePart {
    u32 first = 0;
    u32 workgroups = 0;
    u64 duration_ns = 0;
};

// A `compute` job's N workgroups spread over the shader cores. The mock runs a RUN_COMPUTE as one
// job holding one core, so the dispatch becomes min(N, cores, kMaxJobsPerStream) RUN_COMPUTEs of
// N/k workgroups each (the first N % k one more). `duration_us` is the dispatch's shader time in
// all: a workgroup takes duration_us / N on its core, so more cores finish sooner and the GPU load
// does not depend on N.
std::vector<ComputePart> split_dispatch(u32 workgroups, u64 duration_ns, u64 shader_present) {
    const u32 cores = std::max(1, std::popcount(shader_present));
    const u32 n = std::max<u32>(1, workgroups);
    const u32 k = std::min({n, cores, mock_hw::kMaxJobsPerStream});
    std::vector<ComputePart> parts(k);
    u32 first = 0;
    for (u32 i = 0; i < k; i++) {
        parts[i].first = first;
        parts[i].workgroups = n / k + (i < n % k ? 1 : 0);
        // 128-bit product: duration_ns * workgroups may not fit 64 bits for absurd inputs.
        parts[i].duration_ns = static_cast<u64>(static_cast<unsigned __int128>(duration_ns) * parts[i].workgroups / n);
        first += parts[i].workgroups;
    }
    return parts;
}

}  // namespace

int Runner::stream_for(size_t j, size_t g, u32 gi, size_t q, u64* va, u32* size) {
    const sc::Job& job = s_.jobs[j];
    // The first job to use a tiler heap seeds its free list; that stream is not reused.
    const bool seed_heap = job.kind == sc::JobKind::TilerFragment && !heap_seeded_[job.heap];
    if (seed_heap)
        heap_seeded_[job.heap] = true;
    const auto key = std::make_tuple(j, g, gi, q, seed_heap);
    if (auto it = streams_.find(key); it != streams_.end()) {
        *va = it->second.first;
        *size = it->second.second;
        return 0;
    }
    const size_t vm = s_.groups[g].vm;
    umd::PanthorClient& c = client_of_vm(vm);

    std::optional<mock_hw::MockShader> shader;
    std::vector<ComputePart> parts;
    switch (job.kind) {
    case sc::JobKind::Compute:
        parts = split_dispatch(job.workgroups, job.duration_us * kshim::NSEC_PER_USEC, s_.gpu.id.shader_present);
        break;
    case sc::JobKind::Hang: shader = umd::cs::mock::hang(); break;
    case sc::JobKind::FaultAccess: {
        mock_hw::MockShader m;
        m.kind = mock_hw::MockShader::Access;
        m.addr = job.address;
        shader = m;
        break;
    }
    case sc::JobKind::TilerFragment:
        shader = umd::cs::mock::run(0);
        shader->heap_chunks = job.chunks;
        break;
    default: break;
    }
    u64 shader_va = 0, frag_va = 0;
    if (shader) {
        u8* p = vm_alloc(vm, sizeof(mock_hw::MockShader), &shader_va);
        if (!p) {
            setup_error_ = "runner BO full (shaders)";
            return -ENOSPC;
        }
        std::memcpy(p, &*shader, sizeof(*shader));
    }
    std::vector<u64> part_va(parts.size());
    for (size_t i = 0; i < parts.size(); i++) {
        const mock_hw::MockShader part = umd::cs::mock::run(parts[i].duration_ns);
        u8* p = vm_alloc(vm, sizeof(part), &part_va[i]);
        if (!p) {
            setup_error_ = "runner BO full (shaders)";
            return -ENOSPC;
        }
        std::memcpy(p, &part, sizeof(part));
    }
    if (job.kind == sc::JobKind::TilerFragment) {
        const mock_hw::MockShader frag = umd::cs::mock::run(0);
        u8* p = vm_alloc(vm, sizeof(frag), &frag_va);
        if (!p) {
            setup_error_ = "runner BO full (shaders)";
            return -ENOSPC;
        }
        std::memcpy(p, &frag, sizeof(frag));
    }
    const u64 cap = align_up((job.instrs.size() + 8 * parts.size() + 64) * 8, 64);
    u64 sva = 0;
    u8* mem = vm_alloc(vm, cap, &sva);
    if (!mem) {
        setup_error_ = "runner BO full (streams)";
        return -ENOSPC;
    }
    umd::cs::Builder b(c.cs_config(), mem, sva, cap);
    const umd::cs::Reg64 d0 = b.reg64(0), d2 = b.reg64(2);
    auto run_shader = [&] {
        b.set_spd(shader_va);
        b.set_sb_entry(3, 0);
        b.req_resource(true, false, false, false);
        b.run_compute();
        b.req_resource(false, false, false, false);
    };
    switch (job.kind) {
    case sc::JobKind::Compute: {
        // Each part's workgroup range goes in the job offset/size staging registers, as a driver
        // would set them (the mock only reads the shader's duration).
        const auto staging = [](unsigned r) { return umd::cs::Reg32{static_cast<u8>(r)}; };
        b.set_sb_entry(3, 0);
        b.req_resource(true, false, false, false);
        for (size_t i = 0; i < parts.size(); i++) {
            b.move32(staging(umd::cs::staging::kJobOffsetX), parts[i].first);
            b.move32(staging(umd::cs::staging::kJobSizeX), parts[i].workgroups);
            b.move32(staging(umd::cs::staging::kJobSizeX + 1u), 1);
            b.move32(staging(umd::cs::staging::kJobSizeX + 2u), 1);
            b.set_spd(part_va[i]);
            b.run_compute();
        }
        b.req_resource(false, false, false, false);
        break;
    }
    case sc::JobKind::Hang:
    case sc::JobKind::FaultAccess: run_shader(); break;
    case sc::JobKind::Store:
        b.move64(d0, bos_[job.bo].va + job.offset);
        b.move64(d2, job.value);
        b.store64(d2, d0, 0);
        break;
    case sc::JobKind::Wait: {
        const size_t wg = job.wait_queue.group;
        const u32 wgi = gi < groups_[wg].size() ? gi : 0;
        b.move64(d0, groups_[wg][wgi].progress_va[job.wait_queue.queue]);
        b.move64(d2, job.value - 1);
        b.sync_wait64(d0, d2, panthor::cs::GREATER);
        break;
    }
    case sc::JobKind::Asm:
        // Validated by the parser (umd/cs_asm); a MOVE of a `@bo` adds the BO's GPU VA.
        for (const sc::AsmInstr& in : job.instrs)
            b.emit(umd::cs::encode(in, in.bo_ref ? bos_[*in.bo_ref].va : 0));
        break;
    case sc::JobKind::TilerFragment: {
        // One tiling pass taking `chunks` chunks, then the fragment pass handing them back. The
        // mock firmware leaves seeding the context's free list to the heap's creator: the first
        // stream that uses the heap does it (seed_heap).
        const umd::TilerHeap& h = heaps_[job.heap];
        const umd::cs::Reg64 last = b.reg64(8), first = b.reg64(10);
        b.move64(d0, h.ctx_gpu_va);
        b.heap_set(d0);
        if (seed_heap) {
            b.move64(d2, h.first_chunk_gpu_va | (s_.heaps[job.heap].chunk_size >> 12));
            b.store64(d2, d0, static_cast<std::int16_t>(offsetof(mock_hw::MockHeapContext, free_chunk)));
            b.wait_all();
        }
        b.set_sb_entry(3, 0);
        b.heap_operation(panthor::cs::HEAP_VT_START);
        b.set_idvs_shader(shader_va);
        b.req_resource(false, false, false, true);
        b.run_idvs();
        b.req_resource(false, false, false, false);
        b.wait_slot(3);
        b.finish_tiling();
        b.load_multiple(last.lo(), 0xF, d0, static_cast<std::int16_t>(offsetof(mock_hw::MockHeapContext, last_chunk)));
        b.heap_operation(panthor::cs::HEAP_VT_END);
        b.set_fbd(frag_va);
        b.req_resource(false, true, false, false);
        b.run_fragment();
        b.req_resource(false, false, false, false);
        b.wait_slot(3);
        b.finish_fragment(false, last, first);
        b.heap_operation(panthor::cs::HEAP_FRAG_END);
        break;
    }
    }
    // The queue's progress object counts its completed jobs (what `wait` jobs look at).
    b.wait_all();
    b.move64(d0, groups_[g][gi].progress_va[q]);
    b.move64(d2, 1);
    b.sync_add64(d0, d2);
    b.wait_all();
    b.pad_to(8);
    if (umd::Status st = b.finish(); !st) {
        setup_error_ =
            "job '" + job.name + "' (line " + std::to_string(job.loc.line) + "): command stream: " + b.error_message();
        return st.error();
    }
    *va = sva;
    *size = static_cast<u32>(b.size_bytes());
    streams_[key] = {sva, *size};
    return 0;
}

}  // namespace upanthor::run_detail
