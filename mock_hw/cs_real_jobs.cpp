// RUN_* on real Valhall descriptors (what Mesa's panvk submits), docs/mock_hw.md "Real
// descriptors". The mock executes no shader: it reads what the hardware reads before shading (the
// job's descriptors through the group's address space, and each shader's first instruction with
// an execute access), so an unmapped or non-executable address stalls or faults as it would on
// hardware, a descriptor of the wrong type is DATA_INVALID_FAULT, and the job then holds a core for
// a time its size gives and completes without writing memory. Layouts: hw/csf/valhall_desc.h.
#include <algorithm>
#include <array>

#include "hw/csf/valhall_desc.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

namespace cs = panthor::cs;
namespace v = panthor::valhall;
using Instr = cs::Instr;

namespace {
// Saturating helpers: sizes come from user registers.
u64 mul_sat(u64 a, u64 b) {
    unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    return p > ~u64{0} ? ~u64{0} : static_cast<u64>(p);
}
u64 at_least_one(u32 v) {
    return v ? v : 1;
}
// Pixels in an inclusive bounding box (r42 min, r43 max); an empty box has none.
u64 bbox_pixels(u32 min, u32 max) {
    if (v::bbox_x(max) < v::bbox_x(min) || v::bbox_y(max) < v::bbox_y(min))
        return 0;
    return u64{v::bbox_x(max) - v::bbox_x(min) + 1} * (v::bbox_y(max) - v::bbox_y(min) + 1);
}
}  // namespace

ktime_t CsEngine::real_duration_locked(ktime_t size_ns) const {
    lockdep_assert_held(&lock_);
    const GpuLatencies& lat = gpu_.config().lat;
    const ktime_t d = lat.real_job_base + size_ns;
    return std::clamp<ktime_t>(d, 0, lat.real_job_max);
}

CsEngine::RealJob CsEngine::real_shader_locked(Group& g, Stream& s, u64 spd_va, u32 stage, u64* bad_va) {
    lockdep_assert_held(&lock_);
    v::ShaderProgram spd{};
    if (!mem_read_locked(g, s, spd_va, &spd, sizeof(spd)))
        return RealJob::Stalled;
    if (v::spd_type(spd.word0) != v::kDescShader || v::spd_stage(spd.word0) != stage || !spd.binary) {
        *bad_va = spd_va;
        return RealJob::Invalid;
    }
    // The shader core's first instruction fetch: an execute access, so a binary in a NOEXEC
    // mapping takes the permission fault the hardware reports.
    u64 first = 0;
    const MemResult r = gpu_.mmu().read_locked(g.as, spd.binary, &first, sizeof(first), Access::Execute, kSourceCs);
    if (!r.ok()) {
        mem_fail_locked(g, s, r);
        return RealJob::Stalled;
    }
    return RealJob::Ok;
}

CsEngine::RealJob CsEngine::real_shader_env_locked(Group& g, Stream& s, u64 srt, u64 fau, u64 tsd) {
    lockdep_assert_held(&lock_);
    // The resource table: its entries are read as the shader's descriptors are resolved.
    if (const u64 n = srt & v::kSrtCountMask; n && (srt & ~v::kSrtCountMask)) {
        std::array<v::Resource, v::kSrtCountMask> table{};
        if (!mem_read_locked(g, s, srt & ~v::kSrtCountMask, table.data(), n * sizeof(v::Resource)))
            return RealJob::Stalled;
    }
    // Fast-access uniforms are preloaded into the shader's registers.
    if (const u32 n = v::fau_count(fau); n && (fau & v::kFauAddrMask)) {
        std::array<u64, 256> words{};
        if (!mem_read_locked(g, s, fau & v::kFauAddrMask, words.data(), n * sizeof(u64)))
            return RealJob::Stalled;
    }
    if (tsd) {
        v::LocalStorage ls{};
        if (!mem_read_locked(g, s, tsd, &ls, sizeof(ls)))
            return RealJob::Stalled;
    }
    return RealJob::Ok;
}

CsEngine::RealJob CsEngine::real_fragment_locked(Group& g, Stream& s, u64 fbd_ptr, u32* tile_px, u64* bad_va) {
    lockdep_assert_held(&lock_);
    const u64 fbd = v::fbd_ptr_addr(fbd_ptr);
    if (!v::fbd_ptr_is_mfbd(fbd_ptr) || !fbd) {
        *bad_va = fbd;
        return RealJob::Invalid;
    }
    v::FramebufferParameters p{};
    if (!mem_read_locked(g, s, fbd, &p, sizeof(p)))
        return RealJob::Stalled;
    // The render targets (and the ZS/CRC extension) the tile write-back reads.
    const u64 extra = (v::fbd_ptr_has_zs_crc(fbd_ptr) ? v::kZsCrcExtensionSize : 0) +
                      u64{v::fbd_ptr_rt_count(fbd_ptr)} * v::kRenderTargetSize;
    std::array<u8, v::kZsCrcExtensionSize + 16 * v::kRenderTargetSize> rts{};
    if (!mem_read_locked(g, s, fbd + v::kFramebufferHeaderSize, rts.data(), extra))
        return RealJob::Stalled;
    if (p.tiler) {
        v::TilerContextHeader t{};
        if (!mem_read_locked(g, s, p.tiler, &t, sizeof(t)))
            return RealJob::Stalled;
    }
    *tile_px = v::fbd_effective_tile_size(p.word11);
    return RealJob::Ok;
}

CsEngine::RealJob CsEngine::real_job_locked(Group& g, Stream& s, const Instr& in, MockShader* sh, u64* bad_va) {
    lockdep_assert_held(&lock_);
    const GpuLatencies& lat = gpu_.config().lat;
    ktime_t size_ns = 0;
    RealJob r = RealJob::Ok;
    switch (in.opcode) {
    case cs::RUN_COMPUTE:
    case cs::RUN_COMPUTE_INDIRECT: {
        if ((r = real_shader_locked(g, s, reg64(s, static_cast<u8>(16 + 2 * in.spd)), v::kStageCompute, bad_va)) !=
            RealJob::Ok)
            return r;
        if ((r = real_shader_env_locked(g, s, reg64(s, static_cast<u8>(2 * in.srt)),
                                        reg64(s, static_cast<u8>(8 + 2 * in.fau)),
                                        reg64(s, static_cast<u8>(24 + 2 * in.tsd)))) != RealJob::Ok)
            return r;
        // r33 the workgroup size, r37-r39 the workgroup counts.
        const u32 wg = s.regs[33];
        const u64 per_wg = u64{v::wg_size_x(wg)} * v::wg_size_y(wg) * v::wg_size_z(wg);
        const u64 wgs = mul_sat(mul_sat(s.regs[37], s.regs[38]), s.regs[39]);
        size_ns = static_cast<ktime_t>(std::min<u64>(mul_sat(mul_sat(per_wg, wgs), 1000) / lat.real_invocations_per_us,
                                                     static_cast<u64>(lat.real_job_max)));
        break;
    }
    case cs::RUN_TILING:
    case cs::RUN_IDVS: {
        const bool idvs = in.opcode == cs::RUN_IDVS;
        if ((r = real_shader_locked(g, s, reg64(s, idvs ? 16 : static_cast<u8>(16 + 2 * in.spd)), v::kStageVertex,
                                    bad_va)) != RealJob::Ok)
            return r;
        if ((r = real_shader_env_locked(g, s, reg64(s, idvs ? 0 : static_cast<u8>(2 * in.srt)),
                                        reg64(s, idvs ? 8 : static_cast<u8>(8 + 2 * in.fau)),
                                        reg64(s, idvs ? 24 : static_cast<u8>(24 + 2 * in.tsd)))) != RealJob::Ok)
            return r;
        if (idvs) {
            // The varying shader (d18) and the fragment shader (d20, with its resources at d4 and
            // uniforms at d12) when the draw has them.
            if (const u64 var = reg64(s, 18);
                var && (r = real_shader_locked(g, s, var, v::kStageVertex, bad_va)) != RealJob::Ok)
                return r;
            if (const u64 frag = reg64(s, 20); frag) {
                if ((r = real_shader_locked(g, s, frag, v::kStageFragment, bad_va)) != RealJob::Ok)
                    return r;
                if ((r = real_shader_env_locked(g, s, reg64(s, 4), reg64(s, 12), 0)) != RealJob::Ok)
                    return r;
            }
            // The tiler context the primitives are binned into.
            if (const u64 tiler = reg64(s, 40); tiler) {
                v::TilerContextHeader t{};
                if (!mem_read_locked(g, s, tiler, &t, sizeof(t)))
                    return RealJob::Stalled;
            }
        }
        // r33 the vertex (index) count, r34 the instance count.
        const u64 verts = mul_sat(at_least_one(s.regs[33]), at_least_one(s.regs[34]));
        size_ns = static_cast<ktime_t>(
            std::min<u64>(mul_sat(verts, 1000) / lat.real_vertices_per_us, static_cast<u64>(lat.real_job_max)));
        break;
    }
    case cs::RUN_FRAGMENT: {
        u32 tile_px = 256;
        if ((r = real_fragment_locked(g, s, reg64(s, 40), &tile_px, bad_va)) != RealJob::Ok)
            return r;
        const u64 tiles = (bbox_pixels(s.regs[42], s.regs[43]) + tile_px - 1) / tile_px;
        size_ns = static_cast<ktime_t>(
            std::min<u64>(mul_sat(tiles, static_cast<u64>(lat.real_tile)), static_cast<u64>(lat.real_job_max)));
        break;
    }
    case cs::RUN_FULLSCREEN: {
        // The draw descriptor of the full-screen shader, then the framebuffer it shades.
        std::array<u8, 128> dcd{};
        if (!mem_read_locked(g, s, reg64(s, in.addr), dcd.data(), dcd.size()))
            return RealJob::Stalled;
        u32 tile_px = 256;
        if ((r = real_fragment_locked(g, s, reg64(s, 40), &tile_px, bad_va)) != RealJob::Ok)
            return r;
        const u64 tiles = (bbox_pixels(s.regs[42], s.regs[43]) + tile_px - 1) / tile_px;
        size_ns = static_cast<ktime_t>(
            std::min<u64>(mul_sat(tiles, static_cast<u64>(lat.real_tile)), static_cast<u64>(lat.real_job_max)));
        break;
    }
    default: *bad_va = 0; return RealJob::Invalid;
    }
    *sh = MockShader{};
    sh->kind = MockShader::Run;
    sh->flags = MockShader::kFromDescriptors;
    sh->duration_ns = static_cast<u64>(real_duration_locked(size_ns));
    return RealJob::Ok;
}

}  // namespace mock_hw
