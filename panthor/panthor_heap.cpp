// Mirrors drivers/gpu/drm/panthor/panthor_heap.c: tiler heap contexts, their chunks, the per-VM pool.
//
// DOC: tiler heaps. The tiler writes its polygon lists into "heap chunks", kernel BOs in the VM of
// the group using them. The firmware owns the heap context (32 bytes, one GPU cache line each, in
// the pool's contexts BO) and walks the chunks through their 64-byte headers; the driver only
// zeroes a context when handing it out and writes the headers of the chunks it creates. Initial
// chunks are linked head-first (each new one points to the previous head); a chunk created by
// panthor_heap_grow() is not linked: the firmware links it into the pass that asked for it.
//
// Lifetime: the pool belongs to its VM (vm->heaps.pool holds one reference; the scheduler takes
// more for the duration of a tiler-OOM reply). panthor_heap_pool_destroy(), called when the VM is
// destroyed, frees every heap and the contexts BO and clears pool->vm, after which every entry
// point fails with -EINVAL; the struct itself goes with its last reference. pool->vm is a weak
// pointer: the VM cannot go away before panthor_vm_destroy() has destroyed the pool.
//
// Locking: pool->lock (rw) guards the heap table, pool->vm and pool->gpu_contexts. Create/destroy
// take it for writing, grow/return_chunk for reading, so OOM replies for different heaps run in
// parallel; each heap's own mutex serialises its chunk list and is held across a grow's check and
// allocation (upstream drops it in between, so two concurrent grows can both pass max_chunks).
// Chunks are allocated (GFP_KERNEL, VM map) with these locks held, as upstream: the tiler-OOM work
// is not a fence-signalling path.
#include "panthor/panthor_heap.h"

#include <boost/intrusive/list.hpp>

#include <atomic>
#include <cstring>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/err.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/report.h"
#include "kernel_shim/rwsem.h"
#include "kernel_shim/sizes.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/trace.h"
#include "kernel_shim/xarray.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_mmu.h"
#include "uapi/drm/panthor_drm.h"

namespace panthor {

using namespace kshim;
namespace bi = boost::intrusive;

namespace {

// The part of a context the firmware uses; each context gets a whole GPU cache line so the CPU
// zeroing one never shares a line with the firmware updating a neighbour.
constexpr u32 HEAP_CONTEXT_SIZE = 32;
constexpr u32 MAX_HEAPS_PER_POOL = 128;
// A chunk pointer carries the chunk size (in 4 KiB units) in the low 12 bits of its VA.
constexpr u64 CHUNK_VA_MASK = ~u64{0xFFF};

// Chunks held by every tiler heap of the process, for the trace's "tiler heap chunks" counter
// (the trace is process-wide too). Kept while tracing is off so a trace started later is right.
std::atomic<long> g_trace_heap_chunks{0};

void trace_heap_chunks(long delta) {
    const long total = g_trace_heap_chunks.fetch_add(delta, std::memory_order_relaxed) + delta;
    if (kshim::trace::enabled())
        kshim::trace::counter("tiler heap chunks", static_cast<double>(total));
}

}  // namespace

// The first 64 bytes of every chunk, as the firmware reads them (docs/hw/csf/fw-interfaces.md).
struct panthor_heap_chunk_header {
    u64 next;         // next chunk: VA | chunk_size >> 12, 0 ends the list
    u32 unknown[14];  // MBZ
};
static_assert(sizeof(panthor_heap_chunk_header) == 64);

struct panthor_heap_chunk {
    bi::list_member_hook<bi::link_mode<bi::safe_link>> node;  // on panthor_heap::chunks
    panthor_kernel_bo* bo = nullptr;
};

using panthor_heap_chunk_list =
    bi::list<panthor_heap_chunk,
             bi::member_hook<panthor_heap_chunk, decltype(panthor_heap_chunk::node), &panthor_heap_chunk::node>>;

struct panthor_heap {
    kshim::Mutex lock{"panthor_heap.lock"};           // protects chunks and chunk_count
    panthor_heap_chunk_list chunks GUARDED_BY(lock);  // newest first
    u32 chunk_count GUARDED_BY(lock) = 0;

    // Fixed at creation.
    u32 chunk_size = 0;
    u32 max_chunks = 0;
    // Render passes in flight above which grow refuses, so the firmware waits for fragment jobs
    // to give chunks back instead.
    u32 target_in_flight = 0;
};

struct panthor_heap_pool {
    kshim::kref refcount;
    panthor_device* ptdev = nullptr;

    // Protects vm, xa (membership: heaps are inserted and erased under the write side) and
    // gpu_contexts.
    kshim::RwSemaphore lock{"panthor_heap_pool.lock"};
    // Weak: the VM destroys the pool before it can go. nullptr once the pool is destroyed.
    panthor_vm* vm = nullptr;
    kshim::XArray<panthor_heap> xa{XA_FLAGS_ALLOC};  // heap id -> heap, ids 0..127
    panthor_kernel_bo* gpu_contexts = nullptr;       // MAX_HEAPS_PER_POOL contexts, CPU-mapped

    // Bytes of GPU memory held (contexts BO + chunks). Atomic so fdinfo reads it without a lock.
    std::atomic<size_t> size{0};
};

namespace {

u32 panthor_heap_ctx_stride(const panthor_device* ptdev) {
    const u32 line = GPU_L2_FEATURES_LINE_SIZE(ptdev->gpu_info.l2_features);
    return (HEAP_CONTEXT_SIZE + line - 1) & ~(line - 1);
}

u32 panthor_get_heap_ctx_offset(const panthor_heap_pool* pool, u32 id) {
    return panthor_heap_ctx_stride(pool->ptdev) * id;
}

void* panthor_get_heap_ctx(panthor_heap_pool* pool, u32 id) {
    return static_cast<u8*>(pool->gpu_contexts->kmap) + panthor_get_heap_ctx_offset(pool, id);
}

void panthor_free_heap_chunk(panthor_heap_pool* pool, panthor_heap* heap, panthor_heap_chunk* chunk) {
    {
        kshim::MutexGuard g(heap->lock);
        heap->chunks.erase(heap->chunks.iterator_to(*chunk));
        heap->chunk_count--;
    }
    trace_heap_chunks(-1);
    pool->size.fetch_sub(heap->chunk_size, std::memory_order_relaxed);
    panthor_kernel_bo_destroy(chunk->bo);
    kdelete(chunk);
}

// Adds a chunk at the head of the heap's list; *chunk_gpu_va (optional) receives its VA. An
// initial chunk links to the previous head; a grown one is left unlinked (next = 0), the firmware
// links it where it uses it. The heap lock is held across the allocation so that concurrent grows
// cannot both pass the max_chunks check.
int panthor_alloc_heap_chunk_locked(panthor_heap_pool* pool, panthor_vm* vm, panthor_heap* heap, bool initial_chunk,
                                    u64* chunk_gpu_va) REQUIRES(heap->lock) {
    lockdep_assert_held(&heap->lock);

    auto* chunk = knew<panthor_heap_chunk>(GFP_KERNEL);
    if (!chunk)
        return -ENOMEM;

    chunk->bo =
        panthor_kernel_bo_create(pool->ptdev, vm, heap->chunk_size, DRM_PANTHOR_BO_NO_MMAP,
                                 DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC, PANTHOR_VM_KERNEL_AUTO_VA, "Tiler heap chunk");
    if (IS_ERR(chunk->bo)) {
        const int ret = static_cast<int>(PTR_ERR(chunk->bo));
        kdelete(chunk);
        return ret;
    }

    int ret = panthor_kernel_bo_vmap(chunk->bo);
    if (ret) {
        panthor_kernel_bo_destroy(chunk->bo);
        kdelete(chunk);
        return ret;
    }

    panthor_heap_chunk_header hdr{};
    if (initial_chunk && !heap->chunks.empty()) {
        const u64 prev_gpuva = panthor_kernel_bo_gpuva(heap->chunks.front().bo);
        hdr.next = (prev_gpuva & CHUNK_VA_MASK) | (heap->chunk_size >> 12);
    }
    std::memcpy(chunk->bo->kmap, &hdr, sizeof(hdr));
    panthor_kernel_bo_vunmap(chunk->bo);

    heap->chunks.push_front(*chunk);
    heap->chunk_count++;
    trace_heap_chunks(1);

    pool->size.fetch_add(heap->chunk_size, std::memory_order_relaxed);
    if (chunk_gpu_va)
        *chunk_gpu_va = panthor_kernel_bo_gpuva(chunk->bo);
    return 0;
}

// Outside the thread-safety analysis: it reads heap->chunks unlocked because the heap is
// unreachable (unpublished or being destroyed); panthor_free_heap_chunk takes the lock to unlink.
void panthor_free_heap_chunks(panthor_heap_pool* pool, panthor_heap* heap) NO_THREAD_SAFETY_ANALYSIS {
    while (!heap->chunks.empty())
        panthor_free_heap_chunk(pool, heap, &heap->chunks.front());
}

int panthor_alloc_heap_chunks(panthor_heap_pool* pool, panthor_vm* vm, panthor_heap* heap, u32 chunk_count) {
    kshim::MutexGuard g(heap->lock);
    for (u32 i = 0; i < chunk_count; i++) {
        const int ret = panthor_alloc_heap_chunk_locked(pool, vm, heap, true, nullptr);
        if (ret)
            return ret;
    }
    return 0;
}

void panthor_heap_free(panthor_heap_pool* pool, panthor_heap* heap) {
    panthor_free_heap_chunks(pool, heap);
    kdelete(heap);
}

int panthor_heap_destroy_locked(panthor_heap_pool* pool, u32 handle) {
    lockdep_assert_held(&pool->lock);

    panthor_heap* heap = pool->xa.erase(handle);
    if (!heap)
        return -EINVAL;
    panthor_heap_free(pool, heap);
    return 0;
}

// The heap whose context is at `heap_gpu_va`, or nullptr. Called with pool->lock held; the pool
// may have been destroyed since the caller got its reference (no contexts BO then).
panthor_heap* panthor_heap_from_ctx_va_locked(panthor_heap_pool* pool, u64 heap_gpu_va) {
    lockdep_assert_held(&pool->lock);

    if (!pool->gpu_contexts)
        return nullptr;
    const u64 offset = heap_gpu_va - panthor_kernel_bo_gpuva(pool->gpu_contexts);
    const u32 stride = panthor_heap_ctx_stride(pool->ptdev);
    if (offset >= u64{MAX_HEAPS_PER_POOL} * stride)
        return nullptr;
    return pool->xa.load(static_cast<u32>(offset / stride));
}

}  // namespace

int panthor_heap_destroy(panthor_heap_pool* pool, u32 handle) {
    down_write(&pool->lock);
    const int ret = panthor_heap_destroy_locked(pool, handle);
    up_write(&pool->lock);
    return ret;
}

// Returns the heap id (>= 0) or -errno.
int panthor_heap_create(panthor_heap_pool* pool, u32 initial_chunk_count, u32 chunk_size, u32 max_chunks,
                        u32 target_in_flight, u64* heap_ctx_gpu_va, u64* first_chunk_gpu_va) {
    if (initial_chunk_count == 0 || initial_chunk_count > max_chunks)
        return -EINVAL;
    if ((chunk_size & (SZ_4K - 1)) || chunk_size < SZ_128K || chunk_size > SZ_8M)
        return -EINVAL;

    down_read(&pool->lock);
    panthor_vm* vm = panthor_vm_get(pool->vm);
    up_read(&pool->lock);

    // The pool was destroyed with its VM.
    if (!vm)
        return -EINVAL;

    int ret;
    u32 id = 0;
    auto* heap = knew<panthor_heap>(GFP_KERNEL);
    if (!heap) {
        panthor_vm_put(vm);
        return -ENOMEM;
    }
    heap->chunk_size = chunk_size;
    heap->max_chunks = max_chunks;
    heap->target_in_flight = target_in_flight;

    // Unpublished yet: the chunks are allocated without the pool lock.
    ret = panthor_alloc_heap_chunks(pool, vm, heap, initial_chunk_count);
    if (ret)
        goto err_free_heap;

    {
        kshim::MutexGuard g(heap->lock);  // uncontended (unpublished); chunks is GUARDED_BY it
        *first_chunk_gpu_va = panthor_kernel_bo_gpuva(heap->chunks.front().bo);
    }

    down_write(&pool->lock);
    if (!pool->vm) {
        // Destroyed while the chunks were being allocated.
        ret = -EINVAL;
    } else {
        ret = pool->xa.alloc(&id, heap, XA_LIMIT(0, MAX_HEAPS_PER_POOL - 1), GFP_KERNEL);
        if (!ret) {
            std::memset(panthor_get_heap_ctx(pool, id), 0, panthor_heap_ctx_stride(pool->ptdev));
            *heap_ctx_gpu_va = panthor_kernel_bo_gpuva(pool->gpu_contexts) + panthor_get_heap_ctx_offset(pool, id);
        }
    }
    up_write(&pool->lock);
    if (ret)
        goto err_free_heap;

    panthor_vm_put(vm);
    return static_cast<int>(id);

err_free_heap:
    panthor_heap_free(pool, heap);
    panthor_vm_put(vm);
    return ret;
}

// For a chunk panthor_heap_grow() handed out that never reached the firmware (the group was
// scheduled out before the reply).
int panthor_heap_return_chunk(panthor_heap_pool* pool, u64 heap_gpu_va, u64 chunk_gpu_va) {
    panthor_heap_chunk* removed = nullptr;
    int ret = -EINVAL;

    down_read(&pool->lock);
    panthor_heap* heap = panthor_heap_from_ctx_va_locked(pool, heap_gpu_va);
    if (heap) {
        chunk_gpu_va &= CHUNK_VA_MASK;
        {
            kshim::MutexGuard g(heap->lock);
            for (panthor_heap_chunk& chunk : heap->chunks) {
                if (panthor_kernel_bo_gpuva(chunk.bo) == chunk_gpu_va) {
                    removed = &chunk;
                    heap->chunks.erase(heap->chunks.iterator_to(chunk));
                    heap->chunk_count--;
                    break;
                }
            }
        }
        if (removed) {
            trace_heap_chunks(-1);
            pool->size.fetch_sub(heap->chunk_size, std::memory_order_relaxed);
            panthor_kernel_bo_destroy(removed->bo);
            kdelete(removed);
            ret = 0;
        }
    }
    up_read(&pool->lock);
    return ret;
}

int panthor_heap_grow(panthor_heap_pool* pool, u64 heap_gpu_va, u32 renderpasses_in_flight, u32 pending_frag_count,
                      u64* new_chunk_gpu_va) {
    (void)pending_frag_count;  // part of the interface; upstream does not use it either
    int ret;

    down_read(&pool->lock);
    panthor_heap* heap = panthor_heap_from_ctx_va_locked(pool, heap_gpu_va);
    if (!heap) {
        ret = -EINVAL;
        goto out_unlock;
    }

    {
        kshim::MutexGuard g(heap->lock);
        // -ENOMEM tells the firmware to find memory another way: wait for fragment jobs to
        // return chunks, or run the user's tiler-OOM exception handler (incremental rendering).
        if (renderpasses_in_flight > heap->target_in_flight || heap->chunk_count >= heap->max_chunks) {
            ret = -ENOMEM;
        } else {
            // A blocking allocation, as upstream (which would rather fail fast and let the
            // firmware's exception handler free memory). Its errno is passed on: -ENOMEM for a
            // failed allocation.
            u64 chunk_va;
            ret = panthor_alloc_heap_chunk_locked(pool, pool->vm, heap, false, &chunk_va);
            if (!ret)
                *new_chunk_gpu_va = (chunk_va & CHUNK_VA_MASK) | (heap->chunk_size >> 12);
        }
    }

out_unlock:
    up_read(&pool->lock);
    return ret;
}

panthor_heap_pool* panthor_heap_pool_get(panthor_heap_pool* pool) {
    if (pool)
        kref_get(&pool->refcount);
    return pool;
}

void panthor_heap_pool_put(panthor_heap_pool* pool) {
    if (pool)
        kref_put(&pool->refcount, [pool](kshim::kref*) {
            // Destroyed before the last reference goes (the VM does it).
            WARN_ON(!pool->xa.empty());
            kdelete(pool);
        });
}

panthor_heap_pool* panthor_heap_pool_create(panthor_device* ptdev, panthor_vm* vm) {
    const size_t bosize =
        (size_t{MAX_HEAPS_PER_POOL} * panthor_heap_ctx_stride(ptdev) + SZ_4K - 1) & ~size_t{SZ_4K - 1};

    auto* pool = knew<panthor_heap_pool>(GFP_KERNEL);
    if (!pool)
        return ERR_PTR<panthor_heap_pool>(-ENOMEM);
    pool->ptdev = ptdev;
    pool->vm = vm;

    int ret;
    panthor_kernel_bo* ctxs =
        panthor_kernel_bo_create(ptdev, vm, bosize, DRM_PANTHOR_BO_NO_MMAP, DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC,
                                 PANTHOR_VM_KERNEL_AUTO_VA, "Heap pool");
    if (IS_ERR(ctxs)) {
        ret = static_cast<int>(PTR_ERR(ctxs));
        goto err_destroy_pool;
    }
    pool->gpu_contexts = ctxs;
    pool->size.fetch_add(panthor_kernel_bo_size(ctxs), std::memory_order_relaxed);

    ret = panthor_kernel_bo_vmap(ctxs);
    if (ret)
        goto err_destroy_pool;
    return pool;

err_destroy_pool:
    panthor_heap_pool_destroy(pool);
    return ERR_PTR<panthor_heap_pool>(ret);
}

// Frees every heap and the contexts BO now: a group still using one faults on the GPU and is
// flagged faulty. The struct stays until its last reference is dropped.
void panthor_heap_pool_destroy(panthor_heap_pool* pool) {
    if (!pool)
        return;

    down_write(&pool->lock);
    pool->xa.for_each([pool](u32 id, panthor_heap*) { WARN_ON(panthor_heap_destroy_locked(pool, id)); });
    if (pool->gpu_contexts) {
        pool->size.fetch_sub(panthor_kernel_bo_size(pool->gpu_contexts), std::memory_order_relaxed);
        panthor_kernel_bo_destroy(pool->gpu_contexts);
        pool->gpu_contexts = nullptr;
    }
    pool->vm = nullptr;
    up_write(&pool->lock);

    panthor_heap_pool_put(pool);
}

size_t panthor_heap_pool_size(panthor_heap_pool* pool) {
    return pool ? pool->size.load(std::memory_order_relaxed) : 0;
}

}  // namespace panthor
