// Mirrors Mesa's src/panfrost/lib/pan_jc.h (pan_jc_add_job, pan_jc_initialize_tiler) and the
// job emitters of panvk's JM backend.
#include "umd/pan_jc.h"

#include <cerrno>
#include <cstring>

namespace umd {

void* MappedRanges::cpu(std::uint64_t va, std::size_t len) {
    for (const Range& r : ranges_) {
        if (va >= r.va && len <= r.size && va - r.va <= r.size - len)
            return r.cpu + (va - r.va);
    }
    return nullptr;
}

Result<JobPtr> JobPool::alloc(std::uint64_t size, std::uint64_t align) {
    const std::uint64_t start = (used_ + align - 1) & ~(align - 1);
    if (start > size_ || size > size_ - start)
        return err(-ENOMEM);
    void* p = mem_->cpu(base_ + start, size);
    if (!p)
        return err(-EFAULT);
    std::memset(p, 0, size);
    used_ = start + size;
    return JobPtr{base_ + start, static_cast<std::uint8_t*>(p)};
}

bool job_uses_tiling(std::uint32_t type, std::uint32_t arch) {
    if (arch >= 9 && type == jm_desc::kJobMallocVertex)
        return true;
    if (arch >= 6 && type == jm_desc::kJobIndexedVertex)
        return true;
    return type == jm_desc::kJobTiler;
}

void JobChain::reset() {
    first_job_ = 0;
    job_index_ = 0;
    prev_job_ = 0;
    first_tiler_ = 0;
    first_tiler_dep1_ = 0;
    tiler_dep_ = 0;
    write_value_index_ = 0;
}

int JobChain::add_job(std::uint32_t type, JobFlags flags, std::uint32_t local_dep, std::uint32_t global_dep, JobPtr job,
                      bool inject) {
    jm_desc::JobHeader* h = header(job.gpu);
    if (!h)
        return -EFAULT;
    if (inject && type != jm_desc::kJobTiler)
        return -EINVAL;  // only a reload tiler job goes in front
    const bool tiling = job_uses_tiling(type, arch_);
    if (tiling) {
        // Tiling is ordered: each tiling job waits for the previous one; on Midgard the first one
        // waits for the WRITE_VALUE that clears the polygon list, whose index is taken now.
        if (arch_ <= 5 && !write_value_index_)
            write_value_index_ = ++job_index_;
        if (tiler_dep_ && !inject)
            global_dep = tiler_dep_;
        else if (arch_ <= 5)
            global_dep = write_value_index_;
    }
    const std::uint32_t index = ++job_index_;

    std::uint32_t control = jm_desc::job_control(type, index, flags.barrier, arch_ <= 7);
    if (flags.suppress_prefetch)
        control |= jm_desc::kJobSuppressPrefetch;
    std::memset(h, 0, sizeof(*h));
    h->control = control;
    h->dependency_1 = static_cast<std::uint16_t>(local_dep);
    h->dependency_2 = static_cast<std::uint16_t>(global_dep);
    if (inject)
        h->next = first_job_;

    if (inject) {
        // The old first tiler job now comes after this one in tiling order.
        if (first_tiler_) {
            jm_desc::JobHeader* ft = header(first_tiler_);
            if (!ft)
                return -EFAULT;
            ft->dependency_1 = static_cast<std::uint16_t>(first_tiler_dep1_);
            ft->dependency_2 = static_cast<std::uint16_t>(index);
        }
        first_tiler_ = job.gpu;
        first_tiler_dep1_ = local_dep;
        first_job_ = job.gpu;
        if (!prev_job_)
            prev_job_ = job.gpu;
        return static_cast<int>(index);
    }

    if (tiling) {
        if (!first_tiler_) {
            first_tiler_ = job.gpu;
            first_tiler_dep1_ = local_dep;
        }
        tiler_dep_ = index;
    }
    if (prev_job_) {
        jm_desc::JobHeader* prev = header(prev_job_);
        if (!prev)
            return -EFAULT;
        prev->next = job.gpu;
    } else {
        first_job_ = job.gpu;
    }
    prev_job_ = job.gpu;
    return static_cast<int>(index);
}

Result<JobPtr> JobChain::initialize_tiler(JobPool& pool, std::uint64_t polygon_list) {
    if (arch_ >= 6 || !first_tiler_)
        return JobPtr{};
    Result<JobPtr> j = pool.alloc(jm_desc::kWriteValueJobSize, job_align());
    if (!j)
        return j;
    auto* h = reinterpret_cast<jm_desc::JobHeader*>(j->cpu);
    h->control = jm_desc::job_control(jm_desc::kJobWriteValue, write_value_index_, false, true);
    h->next = first_job_;
    jm_desc::WriteValuePayload p{};
    p.address = polygon_list;
    p.type = jm_desc::kWriteValueZero;
    std::memcpy(j->cpu + jm_desc::kJobPayloadOffset, &p, sizeof(p));
    first_job_ = j->gpu;
    return j;
}

namespace {

// A job of `size` bytes with `payload` at +0x20, added to the chain.
int emit(JobPool& pool, JobChain& jc, std::uint32_t type, std::uint32_t size, const void* payload, std::size_t len,
         JobFlags flags, std::uint32_t dep1, std::uint32_t dep2) {
    Result<JobPtr> j = pool.alloc(size, jc.job_align());
    if (!j)
        return j.error();
    if (len)
        std::memcpy(j->cpu + jm_desc::kJobPayloadOffset, payload, len);
    return jc.add_job(type, flags, dep1, dep2, *j);
}

unsigned logbase2_ceil(std::uint32_t v) {
    unsigned n = 0;
    while ((std::uint64_t{1} << n) < v)
        n++;
    return n;
}

}  // namespace

int emit_null_job(JobPool& pool, JobChain& jc, JobFlags flags, std::uint32_t dep1, std::uint32_t dep2) {
    return emit(pool, jc, jm_desc::kJobNull, jm_desc::kJobHeaderSize, nullptr, 0, flags, dep1, dep2);
}

int emit_write_value(JobPool& pool, JobChain& jc, std::uint64_t address, std::uint32_t type, std::uint64_t immediate,
                     JobFlags flags, std::uint32_t dep1, std::uint32_t dep2) {
    jm_desc::WriteValuePayload p{};
    p.address = address;
    p.type = type;
    p.immediate = immediate;
    return emit(pool, jc, jm_desc::kJobWriteValue, jm_desc::kWriteValueJobSize, &p, sizeof(p), flags, dep1, dep2);
}

int emit_cache_flush(JobPool& pool, JobChain& jc, std::uint32_t word0, std::uint32_t word1, JobFlags flags,
                     std::uint32_t dep1, std::uint32_t dep2) {
    const jm_desc::CacheFlushPayload p{word0, word1};
    return emit(pool, jc, jm_desc::kJobCacheFlush, jm_desc::kJobHeaderSize + sizeof(p), &p, sizeof(p), flags, dep1,
                dep2);
}

jm_desc::Invocation pack_invocation(std::uint32_t size_x, std::uint32_t size_y, std::uint32_t size_z,
                                    std::uint32_t count_x, std::uint32_t count_y, std::uint32_t count_z) {
    const std::uint32_t values[6] = {size_x, size_y, size_z, count_x, count_y, count_z};
    unsigned shifts[7] = {};
    std::uint32_t packed = 0;
    for (unsigned i = 0; i < 6; i++) {
        const std::uint32_t v = values[i] ? values[i] : 1;
        if (shifts[i] < 32)
            packed |= (v - 1) << shifts[i];
        shifts[i + 1] = shifts[i] + logbase2_ceil(v);
    }
    jm_desc::Invocation inv{};
    inv.invocations = packed;
    inv.shifts = (shifts[1] & 0x1F) | ((shifts[2] & 0x1F) << 5) | ((shifts[3] & 0x3F) << 10) |
                 ((shifts[4] & 0x3F) << 16) | ((shifts[5] & 0x3F) << 22);
    return inv;
}

int emit_shader_job(JobPool& pool, JobChain& jc, std::uint32_t type, const jm_desc::Invocation& inv, JobFlags flags,
                    std::uint32_t dep1, std::uint32_t dep2) {
    std::uint32_t size = 0;
    switch (type) {
    case jm_desc::kJobCompute:
    case jm_desc::kJobVertex: size = jm_desc::kComputeJobSizeV7; break;
    case jm_desc::kJobTiler: size = jm_desc::kTilerJobSizeV7; break;
    default: return -EINVAL;
    }
    return emit(pool, jc, type, size, &inv, sizeof(inv), flags, dep1, dep2);
}

int emit_fragment_job(JobPool& pool, JobChain& jc, std::uint32_t x0, std::uint32_t y0, std::uint32_t x1,
                      std::uint32_t y1, std::uint64_t fbd, JobFlags flags, std::uint32_t dep1, std::uint32_t dep2) {
    jm_desc::FragmentPayload p{};
    p.bound_min = jm_desc::fragment_bound(x0, y0);
    p.bound_max = jm_desc::fragment_bound(x1, y1);
    p.framebuffer = fbd;
    return emit(pool, jc, jm_desc::kJobFragment, jm_desc::kJobHeaderSize + sizeof(p), &p, sizeof(p), flags, dep1, dep2);
}

int emit_draw(JobPool& pool, JobChain& jc, const jm_desc::Invocation& vertices) {
    const int vertex = emit_shader_job(pool, jc, jm_desc::kJobVertex, vertices);
    if (vertex < 0)
        return vertex;
    return emit_shader_job(pool, jc, jm_desc::kJobTiler, vertices, {}, static_cast<std::uint32_t>(vertex));
}

}  // namespace umd
