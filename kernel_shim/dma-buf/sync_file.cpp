// Mirrors drivers/dma-buf/sync_file.c, without the file descriptor.
#include "kernel_shim/dma-buf/sync_file.h"

#include <cstdio>
#include <cstring>

#include "kernel_shim/dma-buf/dma-fence-unwrap.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {
void copy_name(char* dst, size_t size, const char* src) {
    std::snprintf(dst, size, "%s", src ? src : "");
}
}  // namespace

sync_file* sync_file_create(dma_fence* fence) {
    auto* file = knew<sync_file>(GFP_KERNEL);
    if (!file) return nullptr;
    file->fence = dma_fence_get(fence);
    return file;
}

sync_file* sync_file_get(sync_file* file) {
    kref_get(&file->refcount);
    return file;
}

void sync_file_put(sync_file* file) {
    if (!file) return;
    kref_put(&file->refcount, [file](kref*) {
        dma_fence_put(file->fence);
        kdelete(file);
    });
}

dma_fence* sync_file_get_fence(sync_file* file) { return dma_fence_get(file->fence); }

const char* sync_file_get_name(sync_file* file, char* buf, int len) {
    if (file->user_name[0]) {
        copy_name(buf, static_cast<size_t>(len), file->user_name);
    } else {
        dma_fence* f = file->fence;
        std::snprintf(buf, static_cast<size_t>(len), "%s-%s%llu-%llu", dma_fence_driver_name(f),
                      dma_fence_timeline_name(f), static_cast<unsigned long long>(f->context),
                      static_cast<unsigned long long>(f->seqno));
    }
    return buf;
}

void sync_file_set_name(sync_file* file, const char* name) { copy_name(file->user_name, sizeof file->user_name, name); }

sync_file* sync_file_merge(const char* name, sync_file* a, sync_file* b) {
    dma_fence* fence = dma_fence_unwrap_merge(a->fence, b->fence);
    if (!fence) return nullptr;
    sync_file* file = sync_file_create(fence);
    dma_fence_put(fence);
    if (!file) return nullptr;
    sync_file_set_name(file, name);
    return file;
}

int sync_file_get_status(sync_file* file) { return dma_fence_get_status(file->fence); }

int sync_file_get_fence_info(sync_file* file, sync_fence_info* info, u32* num_fences) {
    dma_fence_unwrap iter;
    dma_fence* fence;
    u32 count = 0;
    dma_fence_unwrap_for_each(fence, &iter, file->fence) ++count;
    if (*num_fences == 0) {
        *num_fences = count;
        return 0;
    }
    if (*num_fences < count) return -EINVAL;
    u32 i = 0;
    dma_fence_unwrap_for_each(fence, &iter, file->fence) {
        sync_fence_info& fi = info[i++];
        std::memset(&fi, 0, sizeof fi);
        copy_name(fi.obj_name, sizeof fi.obj_name, dma_fence_timeline_name(fence));
        copy_name(fi.driver_name, sizeof fi.driver_name, dma_fence_driver_name(fence));
        fi.status = dma_fence_get_status(fence);
        fi.timestamp_ns = fi.status ? static_cast<u64>(dma_fence_timestamp(fence)) : 0;
    }
    *num_fences = count;
    return 0;
}

}  // namespace kshim
