// Mirrors drivers/gpu/drm/panthor/panthor_heap.h: tiler heaps and the per-VM heap pool.
//
// A pool holds at most 128 heaps of one VM; each heap has a 32-byte context (line-aligned) in the
// pool's contexts BO and a list of chunks, each a kernel BO in the VM whose first 64 bytes are the
// header the firmware follows. The scheduler's tiler-OOM worker grows a heap; chunks the firmware
// gives back are freed with panthor_heap_return_chunk.
#pragma once
#include <cstddef>

#include "kernel_shim/types.h"

namespace panthor {

using kshim::u32;
using kshim::u64;

struct panthor_device;
struct panthor_heap_pool;
struct panthor_vm;

int panthor_heap_create(panthor_heap_pool* pool, u32 initial_chunk_count, u32 chunk_size, u32 max_chunks,
                        u32 target_in_flight, u64* heap_ctx_gpu_va, u64* first_chunk_gpu_va);
int panthor_heap_destroy(panthor_heap_pool* pool, u32 handle);

// ERR_PTR on failure.
panthor_heap_pool* panthor_heap_pool_create(panthor_device* ptdev, panthor_vm* vm);
void panthor_heap_pool_destroy(panthor_heap_pool* pool);

panthor_heap_pool* panthor_heap_pool_get(panthor_heap_pool* pool);
void panthor_heap_pool_put(panthor_heap_pool* pool);

// Bytes of GPU memory the pool holds (contexts BO + every chunk), for fdinfo.
size_t panthor_heap_pool_size(panthor_heap_pool* pool);

// 0 and *new_chunk_gpu_va (VA | chunk_size >> 12), or -errno: -EINVAL unknown heap,
// -ENOMEM when the firmware should wait (max chunks reached, too many render passes in flight, or
// the allocation failed), as upstream.
int panthor_heap_grow(panthor_heap_pool* pool, u64 heap_gpu_va, u32 renderpasses_in_flight, u32 pending_frag_count,
                      u64* new_chunk_gpu_va);
int panthor_heap_return_chunk(panthor_heap_pool* pool, u64 heap_gpu_va, u64 chunk_gpu_va);

}  // namespace panthor
