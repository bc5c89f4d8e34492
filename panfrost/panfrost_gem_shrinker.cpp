// Mirrors drivers/gpu/drm/panfrost/panfrost_gem_shrinker.c: the shrinker that purges the BOs
// userspace marked DONTNEED (MADVISE), under memory pressure (kernel_shim/shrinker.h).
//
// DOC: count_objects adds up the pages of the purgeable BOs on pfdev->shrinker_list; scan_objects
// walks the list oldest first and purges each purgeable BO no job uses (gpu_usecount 0) whose
// mappings lock and reservation it can take without waiting: the BO is unmapped from every VM
// (panfrost_gem_teardown_mappings_locked) and its pages dropped for good
// (drm_gem_shmem_purge_locked: madv -1, so a later WILLNEED answers retained = 0), then it leaves
// the list. Every lock is a trylock: a contended BO is skipped, a contended list stops the scan.
#include "drm/drm_gem_shmem_helper.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/log.h"
#include "panfrost/panfrost_device.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_mmu.h"

namespace panfrost {

using namespace kshim;

namespace {

panfrost_gem_object* madv_list_to_bo(list_head* node) {
    return container_of(node, panfrost_gem_object, madv_list);
}

unsigned long panfrost_gem_shrinker_count(shrinker* s, shrink_control*) {
    auto* pfdev = static_cast<panfrost_device*>(s->private_data);
    unsigned long count = 0;

    if (!mutex_trylock(&pfdev->shrinker_lock))
        return 0;
    for (list_head* it = pfdev->shrinker_list.next; it != &pfdev->shrinker_list; it = it->next) {
        drm::drm_gem_shmem_object* shmem = &madv_list_to_bo(it)->base;
        if (drm::drm_gem_shmem_is_purgeable(shmem))
            count += shmem->base.size >> PAGE_SHIFT;
    }
    mutex_unlock(&pfdev->shrinker_lock);
    return count;
}

bool panfrost_gem_purge(drm::drm_gem_object* obj) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    bool ret = false;

    // A job still uses it: its pages must stay mapped.
    if (bo->gpu_usecount.load())
        return false;
    if (!mutex_trylock(&bo->mappings.lock))
        return false;
    if (dma_resv_trylock(obj->resv)) {
        panfrost_gem_teardown_mappings_locked(bo);
        drm::drm_gem_shmem_purge_locked(&bo->base);
        ret = true;
        dma_resv_unlock(obj->resv);
    }
    mutex_unlock(&bo->mappings.lock);
    return ret;
}

unsigned long panfrost_gem_shrinker_scan(shrinker* s, shrink_control* sc) {
    auto* pfdev = static_cast<panfrost_device*>(s->private_data);
    unsigned long freed = 0;

    if (!mutex_trylock(&pfdev->shrinker_lock))
        return SHRINK_STOP;
    list_head* it = pfdev->shrinker_list.next;
    while (it != &pfdev->shrinker_list) {
        list_head* next = it->next;
        if (freed >= sc->nr_to_scan)
            break;
        drm::drm_gem_shmem_object* shmem = &madv_list_to_bo(it)->base;
        if (drm::drm_gem_shmem_is_purgeable(shmem) && panfrost_gem_purge(&shmem->base)) {
            freed += shmem->base.size >> PAGE_SHIFT;
            list_del_init(it);
        }
        it = next;
    }
    mutex_unlock(&pfdev->shrinker_lock);

    if (freed > 0)
        log_message(LogLevel::Info, nullptr, "Purging %lu bytes", freed << PAGE_SHIFT);
    return freed;
}

}  // namespace

int panfrost_gem_shrinker_init(drm::drm_device* dev) {
    panfrost_device* pfdev = to_panfrost_device(dev);

    pfdev->shrinker = shrinker_alloc(0, "drm-panfrost");
    if (!pfdev->shrinker)
        return -ENOMEM;
    pfdev->shrinker->count_objects = panfrost_gem_shrinker_count;
    pfdev->shrinker->scan_objects = panfrost_gem_shrinker_scan;
    pfdev->shrinker->private_data = pfdev;
    shrinker_register(pfdev->shrinker);
    return 0;
}

void panfrost_gem_shrinker_cleanup(drm::drm_device* dev) {
    panfrost_device* pfdev = to_panfrost_device(dev);
    if (pfdev->shrinker)
        shrinker_free(pfdev->shrinker);
    pfdev->shrinker = nullptr;
}

}  // namespace panfrost
