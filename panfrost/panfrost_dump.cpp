// Mirrors drivers/gpu/drm/panfrost/panfrost_dump.c: the devcoredump taken when a job times out,
// in the PANFROSTDUMP format of uapi/drm/panfrost_drm.h.
//
// DOC: The file is an array of panfrost_dump_object_header (magic "PANF", type, offset and size
// of the object's data) followed by the data: a REG object (panfrost_dump_registers pairs: the
// power-domain READY masks, the job and MMU interrupt state, the slot's current and NEXT
// registers and the AS's registers), then, when the job has BOs, a BOMAP object (the physical
// address of every page of every BO, in order), one BO object per BO (its bytes; the header's
// bomap gives its GPU VA, its first page's index in the BOMAP and whether it could be dumped) and
// a TRAILER. The REG header carries the job's chain address, the GPU id, the format version and
// the number of BOs. Difference: the BO bytes are copied page by page from the pinned pages
// instead of through a vmap (the shim's vmap needs physically adjacent blocks).
#include "panfrost/panfrost_dump.h"

#include <cstring>

#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/job_regs.h"
#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/devcoredump.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/log.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_job.h"
#include "panfrost/panfrost_mmu.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

using namespace drm::uapi;

namespace {

struct panfrost_dump_iterator {
    char* start = nullptr;
    panfrost_dump_object_header* hdr = nullptr;
    char* data = nullptr;
};

// Slot 0's and AS 0's offsets: relocated to the job's slot and AS.
const u32 panfrost_dump_registers_list[] = {
    SHADER_READY_LO,   SHADER_READY_LO + 4,  TILER_READY_LO,     TILER_READY_LO + 4,     L2_READY_LO,
    L2_READY_LO + 4,   JOB_INT_MASK,         JOB_INT_STAT,       JS_HEAD_LO(0),          JS_HEAD_HI(0),
    JS_TAIL_LO(0),     JS_TAIL_HI(0),        JS_AFFINITY_LO(0),  JS_AFFINITY_HI(0),      JS_CONFIG(0),
    JS_STATUS(0),      JS_HEAD_NEXT_LO(0),   JS_HEAD_NEXT_HI(0), JS_AFFINITY_NEXT_LO(0), JS_AFFINITY_NEXT_HI(0),
    JS_CONFIG_NEXT(0), MMU_INT_MASK,         MMU_INT_STAT,       AS_TRANSTAB_LO(0),      AS_TRANSTAB_LO(0) + 4,
    AS_MEMATTR_LO(0),  AS_MEMATTR_LO(0) + 4, AS_FAULTSTATUS(0),  AS_FAULTADDRESS_LO(0),  AS_FAULTADDRESS_LO(0) + 4,
    AS_STATUS(0),
};

void panfrost_core_dump_header(panfrost_dump_iterator* iter, u32 type, const void* data_end) {
    panfrost_dump_object_header* hdr = iter->hdr;
    hdr->magic = PANFROSTDUMP_MAGIC;
    hdr->type = type;
    hdr->file_offset = static_cast<u32>(iter->data - iter->start);
    hdr->file_size = static_cast<u32>(static_cast<const char*>(data_end) - iter->data);
    iter->hdr++;
    iter->data += hdr->file_size;
}

void panfrost_core_dump_registers(panfrost_dump_iterator* iter, panfrost_device* pfdev, u32 as_nr, int slot) {
    auto* dumpreg = reinterpret_cast<panfrost_dump_registers*>(iter->data);
    for (u32 r : panfrost_dump_registers_list) {
        u32 js_as_offset = 0;
        if (r >= JS_BASE && r <= JS_BASE + JS_SLOT_STRIDE)
            js_as_offset = static_cast<u32>(slot) * JS_SLOT_STRIDE;
        else if (r >= MMU_BASE && r <= MMU_BASE + MMU_AS_STRIDE)
            js_as_offset = as_nr << MMU_AS_SHIFT;
        const u32 reg = r + js_as_offset;
        dumpreg->reg = reg;
        dumpreg->value = gpu_read(pfdev, reg);
        dumpreg++;
    }
    panfrost_core_dump_header(iter, PANFROSTDUMP_BUF_REG, dumpreg);
}

}  // namespace

int panfrost_core_dump_init(panfrost_device* pfdev) {
    kshim::Device* dev = pfdev->dev;
    return kshim::devm_add_action_or_reset(dev, [dev] { kshim::dev_coredump_put(dev); });
}

void panfrost_core_dump(panfrost_job* job) {
    panfrost_device* pfdev = job->pfdev;
    // The job is on the hardware: its VM holds an AS.
    const u32 as_nr = job->mmu->as < 0 ? 0 : static_cast<u32>(job->mmu->as);
    const int slot = panfrost_job_get_slot(job);

    // Only the first event, or when re-armed.
    if (!pfdev->dump_core.exchange(false))
        return;

    // Registers and the trailer at least.
    u32 n_obj = 2;
    size_t n_bomap_pages = 0;
    size_t file_size = std::size(panfrost_dump_registers_list) * sizeof(panfrost_dump_registers);

    for (u32 i = 0; i < job->bo_count; i++) {
        drm::drm_gem_object* dbo = job->bos[i];
        // The dump assumes the GPU's and the CPU's page size agree.
        WARN_ON(dbo->size % kshim::PAGE_SIZE);
        file_size += dbo->size;
        n_bomap_pages += dbo->size >> kshim::PAGE_SHIFT;
        n_obj++;
    }
    if (n_bomap_pages) {
        file_size += n_bomap_pages * sizeof(u64);
        n_obj++;
    }
    file_size += sizeof(panfrost_dump_object_header) * n_obj;

    // Big and optional: failing to allocate it is not worth a warning from the allocator.
    auto* start =
        static_cast<char*>(kshim::kzalloc(file_size, kshim::GFP_KERNEL | kshim::__GFP_NOWARN | kshim::__GFP_NORETRY));
    if (!start) {
        dev_warn(pfdev->dev, "failed to allocate devcoredump file");
        return;
    }

    panfrost_dump_iterator iter;
    iter.start = start;
    iter.hdr = reinterpret_cast<panfrost_dump_object_header*>(start);
    iter.data = reinterpret_cast<char*>(&iter.hdr[n_obj]);

    // The job's chain in the REG header, so the dump can be decoded from it.
    iter.hdr->reghdr.jc = job->jc;
    iter.hdr->reghdr.major = PANFROSTDUMP_MAJOR;
    iter.hdr->reghdr.minor = PANFROSTDUMP_MINOR;
    iter.hdr->reghdr.gpu_id = pfdev->features.id;
    iter.hdr->reghdr.nbos = job->bo_count;

    panfrost_core_dump_registers(&iter, pfdev, as_nr, slot);

    u64* bomap = nullptr;
    u64* bomap_start = nullptr;
    if (job->bo_count) {
        bomap_start = bomap = reinterpret_cast<u64*>(iter.data);
        panfrost_core_dump_header(&iter, PANFROSTDUMP_BUF_BOMAP, bomap + n_bomap_pages);
    }

    for (u32 i = 0; i < job->bo_count; i++) {
        panfrost_gem_object* bo = to_panfrost_bo(job->bos[i]);
        panfrost_gem_mapping* mapping = job->mappings[i];
        const size_t size = bo->base.base.size;

        // The mapping pins the pages of a mapped BO; a heap has none of its own.
        if (!bo->base.pages) {
            dev_err(pfdev->dev, "Panfrost Dump: BO has no sgt, cannot dump");
            iter.hdr->bomap.valid = 0;
        } else {
            WARN_ON(!mapping->active);
            iter.hdr->bomap.data[0] = static_cast<u32>(bomap - bomap_start);
            const size_t npages = size >> kshim::PAGE_SHIFT;
            for (size_t p = 0; p < npages; p++) {
                *bomap++ = kshim::page_to_phys(bo->base.pages[p]);
                std::memcpy(iter.data + p * kshim::PAGE_SIZE, kshim::page_address(bo->base.pages[p]), kshim::PAGE_SIZE);
            }
            iter.hdr->bomap.iova = mapping->mmnode.start << kshim::PAGE_SHIFT;
            iter.hdr->bomap.valid = 1;
        }
        panfrost_core_dump_header(&iter, PANFROSTDUMP_BUF_BO, iter.data + size);
    }
    panfrost_core_dump_header(&iter, PANFROSTDUMP_BUF_TRAILER, iter.data);

    kshim::dev_coredumpv(pfdev->dev, iter.start, static_cast<size_t>(iter.data - iter.start), kshim::GFP_KERNEL);
}

}  // namespace panfrost
