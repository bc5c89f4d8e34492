// Mirrors drivers/gpu/drm/panthor/panthor_mmu.h: address spaces, VMs and VM_BIND.
#pragma once
#include "drm/drm_exec.h"
#include "drm/drm_gpuvm.h"
#include "drm/drm_mm.h"
#include "drm/sched/gpu_scheduler.h"
#include "panthor/panthor_device.h"

namespace panthor {

struct panthor_gem_object;
struct panthor_memory_stats;

int panthor_mmu_init(panthor_device* ptdev);
void panthor_mmu_unplug(panthor_device* ptdev);
void panthor_mmu_pre_reset(panthor_device* ptdev);
void panthor_mmu_post_reset(panthor_device* ptdev);
void panthor_mmu_suspend(panthor_device* ptdev);
void panthor_mmu_resume(panthor_device* ptdev);

int panthor_vm_map_bo_range(panthor_vm* vm, panthor_gem_object* bo, u64 offset, u64 size, u64 va, u32 flags);
int panthor_vm_unmap_range(panthor_vm* vm, u64 va, u64 size);
panthor_gem_object* panthor_vm_get_bo_for_va(panthor_vm* vm, u64 va, u64* bo_offset);

int panthor_vm_active(panthor_vm* vm);
void panthor_vm_idle(panthor_vm* vm);
u32 panthor_vm_page_size(panthor_vm* vm);
int panthor_vm_as(panthor_vm* vm);
int panthor_vm_flush_all(panthor_vm* vm);

// A reference on the VM's heap pool (created on demand with `create`), or ERR_PTR.
panthor_heap_pool* panthor_vm_get_heap_pool(panthor_vm* vm, bool create);

panthor_vm* panthor_vm_get(panthor_vm* vm);
void panthor_vm_put(panthor_vm* vm);
panthor_vm* panthor_vm_create(panthor_device* ptdev, bool for_mcu, u64 kernel_va_start, u64 kernel_va_size,
                              u64 kernel_auto_va_start, u64 kernel_auto_va_size);

int panthor_vm_prepare_mapped_bos_resvs(drm::drm_exec* exec, panthor_vm* vm, u32 slot_count);
int panthor_vm_add_bos_resvs_deps_to_job(panthor_vm* vm, drm::drm_sched_job* job);
void panthor_vm_add_job_fence_to_bos_resvs(panthor_vm* vm, drm::drm_sched_job* job);

kshim::dma_resv* panthor_vm_resv(panthor_vm* vm);
drm::drm_gem_object* panthor_vm_root_gem(panthor_vm* vm);

void panthor_vm_pool_destroy(panthor_file* pfile);
int panthor_vm_pool_create(panthor_file* pfile);
int panthor_vm_pool_create_vm(panthor_device* ptdev, panthor_vm_pool* pool, drm_panthor_vm_create* args);
int panthor_vm_pool_destroy_vm(panthor_vm_pool* pool, u32 handle);
// A reference on the VM, or nullptr.
panthor_vm* panthor_vm_pool_get_vm(panthor_vm_pool* pool, u32 handle);

bool panthor_vm_has_unhandled_faults(panthor_vm* vm);
// fdinfo: the heap pools of the file's VMs (resident; active when the VM holds an AS).
void panthor_vm_heaps_sizes(panthor_file* pfile, panthor_memory_stats* stats);
bool panthor_vm_is_unusable(panthor_vm* vm);

// Kernel VA allocation in the VM's kernel range: `va` PANTHOR_VM_KERNEL_AUTO_VA picks one.
int panthor_vm_alloc_va(panthor_vm* vm, u64 va, u64 size, drm::drm_mm_node* va_node);
void panthor_vm_free_va(panthor_vm* vm, drm::drm_mm_node* va_node);

// Drops the file's reference on the dummy BO behind its sparse mappings (postclose).
void panthor_file_sparse_release(panthor_file* pfile);

int panthor_vm_bind_exec_sync_op(drm::drm_file* file, panthor_vm* vm, drm_panthor_vm_bind_op* op);

drm::drm_sched_job* panthor_vm_bind_job_create(drm::drm_file* file, panthor_vm* vm, const drm_panthor_vm_bind_op* op);
void panthor_vm_bind_job_put(drm::drm_sched_job* job);
int panthor_vm_bind_job_prepare_resvs(drm::drm_exec* exec, drm::drm_sched_job* job);
void panthor_vm_bind_job_update_resvs(drm::drm_exec* exec, drm::drm_sched_job* job);

void panthor_vm_update_resvs(panthor_vm* vm, drm::drm_exec* exec, kshim::dma_fence* fence,
                             kshim::dma_resv_usage private_usage, kshim::dma_resv_usage extobj_usage);

// Read-only views for tests and dumps.
// Physical address of the VM's top-level table (what AS_TRANSTAB gets).
u64 panthor_vm_root_page_table_pa(panthor_vm* vm);
// The AS_MEMATTR value programmed for the VM.
u64 panthor_vm_memattr(panthor_vm* vm);
// The physical address `va` maps to in the VM, 0 if unmapped (no lock needed).
kshim::phys_addr_t panthor_vm_iova_to_phys(panthor_vm* vm, u64 va);
// ASes whose fault is pending (masked until their VM is re-activated).
u32 panthor_mmu_faulty_mask(panthor_device* ptdev);
// The MMU interrupts unmasked while the line is not suspended: the fault bits of the ASes that
// were not disabled.
u32 panthor_mmu_irq_events(panthor_device* ptdev);
// Page tables handed out by the page-table cache and not given back yet (all devices).
size_t panthor_mmu_pt_cache_live();

// The page-table kmem_cache (module init/exit in upstream; refcounted here so several devices and
// tests can come and go).
int panthor_mmu_pt_cache_init();
void panthor_mmu_pt_cache_fini();

}  // namespace panthor
