// `upanthor run` on a Job Manager GPU: a scenario [[chain]] as a job chain in GPU memory, built
// with umd/pan_jc the way panvk's JM backend builds its batches (jm_run.h). (No upstream
// counterpart.)
#include <cerrno>

#include "hw/jm/job_desc.h"
#include "tools/upanthor/jm_run.h"
#include "tools/upanthor/scenario.h"

namespace upanthor::jm_detail {

namespace sc = upanthor::scenario;
namespace desc = panfrost::desc;

int build_chain(const sc::JmChain& c, const std::vector<std::uint64_t>& bo_va, umd::JobPool& pool, umd::JobChain& jc) {
    // The index each entry got, for the `dep` of later entries (a draw's is its tiler job's).
    std::vector<std::uint32_t> index;
    for (const sc::JmJob& j : c.jobs) {
        const umd::JobFlags flags{.barrier = j.barrier};
        const std::uint32_t dep = j.dep ? index[*j.dep] : 0;
        // No shader runs on the mock: a job's size is its invocation count (compute, vertex,
        // tiler) or its tiles (fragment), which sets its modelled time.
        const desc::Invocation inv = umd::pack_invocation(static_cast<std::uint32_t>(j.invocations), 1, 1, 1, 1, 1);
        int r = 0;
        switch (j.type) {
        case sc::JmJobType::Null: r = umd::emit_null_job(pool, jc, flags, dep); break;
        case sc::JmJobType::WriteValue:
            r = umd::emit_write_value(pool, jc, j.bo ? bo_va[*j.bo] + j.offset : j.address,
                                      desc::kWriteValueImmediate64, j.value, flags, dep);
            break;
        case sc::JmJobType::CacheFlush:
            r = umd::emit_cache_flush(pool, jc,
                                      desc::kFlushCleanShaderCoreLs | desc::kFlushInvalidateShaderCoreLs |
                                          desc::kFlushInvalidateShaderCoreOther | desc::kFlushJobManagerClean |
                                          desc::kFlushJobManagerInvalidate | desc::kFlushTilerClean |
                                          desc::kFlushTilerInvalidate,
                                      desc::kFlushL2Clean | desc::kFlushL2Invalidate, flags, dep);
            break;
        case sc::JmJobType::Compute: r = umd::emit_shader_job(pool, jc, desc::kJobCompute, inv, flags, dep); break;
        case sc::JmJobType::Vertex: r = umd::emit_shader_job(pool, jc, desc::kJobVertex, inv, flags, dep); break;
        case sc::JmJobType::Tiler: r = umd::emit_shader_job(pool, jc, desc::kJobTiler, inv, flags, dep); break;
        case sc::JmJobType::Fragment:
            r = umd::emit_fragment_job(pool, jc, 0, 0, j.tiles_x - 1, j.tiles_y - 1, 0, flags, dep);
            break;
        case sc::JmJobType::Draw:
            // panvk's draw: the tiler job depends on its vertex job (and, through the scoreboard,
            // on the previous tiling job).
            r = umd::emit_shader_job(pool, jc, desc::kJobVertex, inv, flags, dep);
            if (r > 0)
                r = umd::emit_shader_job(pool, jc, desc::kJobTiler, inv, {}, static_cast<std::uint32_t>(r));
            break;
        }
        if (r < 0)
            return r;
        index.push_back(static_cast<std::uint32_t>(r));
    }
    return 0;
}

}  // namespace upanthor::jm_detail
