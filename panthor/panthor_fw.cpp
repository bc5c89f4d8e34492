// Mirrors drivers/gpu/drm/panthor/panthor_fw.c: MCU firmware loading, boot, interface discovery,
// the req/ack helpers, the ping watchdog, halt and restart.
//
// DOC: The firmware image (mali_csffw.bin) is a list of entries; IFACE entries describe sections
// that become kernel BOs mapped at fixed VAs in the MCU VM (AS 0). Their initial contents are
// kept so a slow restart (after a GPU reset, or when the MCU could not be halted) can re-copy
// them; a fast restart (after a clean halt) keeps the memory as the FW left it. The section at
// CSF_MCU_SHARED_REGION_START holds the GLB/CSG/CS interface blocks: the host finds them once,
// after the first boot, by following the control blocks, and keeps those CPU pointers for the
// life of the device (the FW rebuilds the blocks at the same addresses on every boot).
//
// Requests to the FW are toggled into an input block, announced with a doorbell, and waited for
// by polling the matching output block: a short busy wait, then a sleep on req_waitq, which
// every JOB interrupt wakes.
//
// Lifetime: struct panthor_fw is freed by a devres action of the platform device (upstream ties
// it to the DRM device with drmm_kzalloc); everything else (section BOs and copies, the MCU VM)
// is released by panthor_fw_unplug, which panthor_fw_init also uses to unwind a failed probe.
#include "panthor/panthor_fw.h"

#include <boost/intrusive/list.hpp>
#include <cstring>

#include "hw/csf/fw_image_format.h"
#include "hw/csf/regs/csf_regs.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/job_regs.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/firmware.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sizes.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/wait.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_irq.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched.h"

namespace panthor {

namespace bi = boost::intrusive;
using kshim::SZ_4G;
using kshim::SZ_4K;
using kshim::SZ_8K;

namespace {

constexpr u32 FW_BOOT_TIMEOUT_MS = 1000;
constexpr u32 FW_REQ_TIMEOUT_MS = 100;
constexpr u32 MCU_POLL_DELAY_US = 10;
constexpr u32 MCU_POLL_TIMEOUT_US = 100'000;
constexpr u32 L2_POWER_OFF_TIMEOUT_US = 20'000;

struct panthor_fw_binary_iter {
    const u8* data = nullptr;
    size_t size = 0;
    size_t offset = 0;
};

}  // namespace

struct panthor_fw_section : bi::list_base_hook<bi::link_mode<bi::safe_link>> {
    u32 flags = 0;
    u32 va_start = 0;
    u32 va_end = 0;
    panthor_kernel_bo* mem = nullptr;  // null for an empty VA range
    char* name = nullptr;              // kmalloc'ed, may be null
    // The initial contents, kept to reload the section after a reset.
    struct {
        u8* buf = nullptr;  // kmalloc'ed
        size_t size = 0;
    } data;
};
using panthor_fw_section_list = bi::list<panthor_fw_section, bi::constant_time_size<false>>;

struct panthor_fw_iface {
    panthor_fw_global_iface global;
    panthor_fw_csg_iface groups[MAX_CSGS];
    panthor_fw_cs_iface streams[MAX_CSGS][MAX_CS_PER_CSG];
};

struct panthor_fw {
    panthor_device* ptdev = nullptr;
    panthor_vm* vm = nullptr;

    // Owned sections, in image order. Only touched by init, unplug and the reset/resume paths,
    // which the PM core and the ordered reset workqueue already serialise.
    panthor_fw_section_list sections;
    panthor_fw_section* shared_section = nullptr;

    panthor_fw_iface iface;

    // What the interface advertised at the first boot (0 until then).
    struct {
        u32 version = 0;
        u32 features = 0;
        u32 instr_features = 0;
        u32 group_num = 0;
        u32 stream_num = 0;
    } info;

    char* git_sha = nullptr;  // kmalloc'ed, from the BUILD_INFO_METADATA entry

    struct {
        kshim::delayed_work ping_work;
    } watchdog;

    // Woken by every JOB interrupt: the sleeping half of the ack waits and of the boot wait.
    kshim::wait_queue_head req_waitq;

    // Set by the JOB IRQ handler on the first GLB interrupt after panthor_fw_start.
    std::atomic<bool> booted{false};

    panthor_irq irq;
};

namespace {

void panthor_fw_free_sections(panthor_fw* fw) {
    while (!fw->sections.empty()) {
        panthor_fw_section* section = &fw->sections.front();
        fw->sections.pop_front();
        panthor_kernel_bo_destroy(section->mem);
        kshim::kfree(section->data.buf);
        kshim::kfree(section->name);
        kshim::kdelete(section);
    }
    fw->shared_section = nullptr;

    // The interface blocks lived in the shared section.
    panthor_fw_iface& iface = fw->iface;
    iface.global.control = nullptr;
    iface.global.input = nullptr;
    iface.global.output = nullptr;
    for (u32 i = 0; i < MAX_CSGS; i++) {
        iface.groups[i].control = nullptr;
        iface.groups[i].input = nullptr;
        iface.groups[i].output = nullptr;
        for (u32 j = 0; j < MAX_CS_PER_CSG; j++) {
            iface.streams[i][j].control = nullptr;
            iface.streams[i][j].input = nullptr;
            iface.streams[i][j].output = nullptr;
        }
    }
}

// Timeouts in the GLB input block count units of 1024 ticks of the system timestamp, or of the
// GPU cycle counter when no timestamp frequency is known.
u32 panthor_fw_conv_timeout(panthor_device* ptdev, u32 timeout_us) {
    bool use_cycle_counter = false;
    u64 timer_rate = kshim::arch_timer_get_cntfrq();

    if (!timer_rate) {
        use_cycle_counter = true;
        timer_rate = kshim::clk_get_rate(ptdev->clks.core);
    }

    // The maximum still lets the FW power cores on and off.
    if (WARN_ON(!timer_rate))
        return GLB_TIMER_VAL(~0u) | GLB_TIMER_SOURCE_GPU_COUNTER;

    const u64 divisor = u64{1'000'000} << 10;
    u64 mod_cycles = (u64{timeout_us} * timer_rate + divisor - 1) / divisor;
    if (WARN_ON(mod_cycles > GLB_TIMER_VAL(~0u)))
        mod_cycles = GLB_TIMER_VAL(~0u);

    return GLB_TIMER_VAL(static_cast<u32>(mod_cycles)) | (use_cycle_counter ? GLB_TIMER_SOURCE_GPU_COUNTER : 0);
}

int panthor_fw_binary_iter_read(panthor_device* ptdev, panthor_fw_binary_iter* iter, void* out, size_t size) {
    const size_t new_offset = iter->offset + size;

    if (new_offset > iter->size || new_offset < iter->offset) {
        dev_err(ptdev->dev, "Firmware too small");
        return -EINVAL;
    }

    std::memcpy(out, iter->data + iter->offset, size);
    iter->offset = new_offset;
    return 0;
}

int panthor_fw_binary_sub_iter_init(panthor_device* ptdev, panthor_fw_binary_iter* iter,
                                    panthor_fw_binary_iter* sub_iter, size_t size) {
    const size_t new_offset = iter->offset + size;

    if (new_offset > iter->size || new_offset < iter->offset) {
        dev_err(ptdev->dev, "Firmware entry too long");
        return -EINVAL;
    }

    sub_iter->offset = 0;
    sub_iter->data = iter->data + iter->offset;
    sub_iter->size = size;
    iter->offset = new_offset;
    return 0;
}

// Copies the initial data (and zero-fills a ZERO section) through a temporary CPU mapping unless
// the section is permanently mapped (SHARED).
int panthor_fw_init_section_mem(panthor_device* ptdev, panthor_fw_section* section) {
    (void)ptdev;

    if (!section->data.size && !(section->flags & CSF_FW_BINARY_IFACE_ENTRY_ZERO))
        return 0;

    // Deviation from upstream, which maps the section for the copy and unmaps it again: the
    // mapping is kept (kernel_bo_destroy drops it). A slow reset reloads the sections, and when
    // that reset is a runtime resume started by drm_sched's run_job (a fence-signalling
    // section), taking the BO's reservation lock for a new vmap would invert the
    // reservation -> fence-signalling order (found by the fault campaign, as_stuck).

    const int ret = panthor_kernel_bo_vmap(section->mem);
    if (ret)
        return ret;

    auto* kmap = static_cast<u8*>(section->mem->kmap);
    if (section->data.size)
        std::memcpy(kmap, section->data.buf, section->data.size);
    if (section->flags & CSF_FW_BINARY_IFACE_ENTRY_ZERO)
        std::memset(kmap + section->data.size, 0, panthor_kernel_bo_size(section->mem) - section->data.size);
    return 0;
}

int panthor_fw_load_section_entry(panthor_device* ptdev, const kshim::firmware* fw, panthor_fw_binary_iter* iter,
                                  u32 ehdr) {
    (void)ehdr;
    panthor_fw* pfw = ptdev->fw;
    const u64 vm_pgsz = panthor_vm_page_size(pfw->vm);
    panthor_fw_binary_section_entry_hdr hdr;

    if (WARN_ON(!vm_pgsz))
        return -EINVAL;

    int ret = panthor_fw_binary_iter_read(ptdev, iter, &hdr, sizeof(hdr));
    if (ret)
        return ret;

    if (hdr.data.end < hdr.data.start) {
        dev_err(ptdev->dev, "Firmware corrupted, data.end < data.start (0x%x < 0x%x)", hdr.data.end, hdr.data.start);
        return -EINVAL;
    }

    if (hdr.va.end < hdr.va.start) {
        dev_err(ptdev->dev, "Firmware corrupted, hdr.va.end < hdr.va.start (0x%x < 0x%x)", hdr.va.end, hdr.va.start);
        return -EINVAL;
    }

    if (hdr.data.end > fw->size) {
        dev_err(ptdev->dev, "Firmware corrupted, file truncated? data_end=0x%x > fw size=0x%zx", hdr.data.end,
                fw->size);
        return -EINVAL;
    }

    if ((hdr.va.start % vm_pgsz) || (hdr.va.end % vm_pgsz)) {
        dev_err(ptdev->dev, "Firmware corrupted, virtual addresses not page aligned: 0x%x-0x%x", hdr.va.start,
                hdr.va.end);
        return -EINVAL;
    }

    if (hdr.flags & ~CSF_FW_BINARY_IFACE_ENTRY_SUPPORTED_FLAGS) {
        dev_err(ptdev->dev, "Firmware contains interface with unsupported flags (0x%x)", hdr.flags);
        return -EINVAL;
    }

    if (hdr.flags & CSF_FW_BINARY_IFACE_ENTRY_PROT) {
        dev_warn(ptdev->dev, "Firmware protected mode entry not be supported, ignoring");
        return 0;
    }

    const bool is_shared_region = hdr.va.start == CSF_MCU_SHARED_REGION_START;
    if (is_shared_region && !(hdr.flags & CSF_FW_BINARY_IFACE_ENTRY_SHARED)) {
        dev_err(ptdev->dev, "Interface at 0x%llx must be shared",
                static_cast<unsigned long long>(CSF_MCU_SHARED_REGION_START));
        return -EINVAL;
    }

    const u32 section_size = hdr.va.end - hdr.va.start;
    const u32 data_size = hdr.data.end - hdr.data.start;

    // The VA fields are 32 bits wide, so a section always ends inside the MCU's 4 GiB; what the
    // format does not rule out is data that does not fit its VA range, or two sections claiming
    // the same MCU addresses.
    if (data_size > section_size) {
        dev_err(ptdev->dev, "Firmware corrupted, section data larger than its VA range (0x%x > 0x%x)", data_size,
                section_size);
        return -EINVAL;
    }

    if (is_shared_region && !section_size) {
        dev_err(ptdev->dev, "Firmware corrupted, empty shared interface section");
        return -EINVAL;
    }

    if (section_size) {
        for (const panthor_fw_section& other : pfw->sections) {
            if (other.va_start == other.va_end)
                continue;
            if (hdr.va.start < other.va_end && other.va_start < hdr.va.end) {
                dev_err(ptdev->dev, "Firmware corrupted, section 0x%x-0x%x overlaps section 0x%x-0x%x", hdr.va.start,
                        hdr.va.end, other.va_start, other.va_end);
                return -EINVAL;
            }
        }
    }

    auto* section = kshim::knew<panthor_fw_section>(kshim::GFP_KERNEL);
    if (!section)
        return -ENOMEM;

    // From here on panthor_fw_unplug releases the section, whatever fails next.
    pfw->sections.push_back(*section);
    section->flags = hdr.flags;
    section->va_start = hdr.va.start;
    section->va_end = hdr.va.end;
    section->data.size = data_size;

    if (data_size) {
        auto* data = static_cast<u8*>(kshim::kmalloc(data_size, kshim::GFP_KERNEL));
        if (!data)
            return -ENOMEM;
        std::memcpy(data, fw->data + hdr.data.start, data_size);
        section->data.buf = data;
    }

    // The name fills the rest of the entry, NUL-padded to a 32-bit boundary.
    size_t name_len = iter->size - iter->offset;
    while (name_len && iter->data[iter->offset + name_len - 1] == '\0')
        name_len--;
    if (name_len) {
        auto* name = static_cast<char*>(kshim::kmalloc(name_len + 1, kshim::GFP_KERNEL));
        if (!name)
            return -ENOMEM;
        std::memcpy(name, iter->data + iter->offset, name_len);
        name[name_len] = '\0';
        section->name = name;
    }

    if (section_size) {
        const u32 cache_mode = hdr.flags & CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_MASK;
        u32 vm_map_flags = 0;

        if (!(hdr.flags & CSF_FW_BINARY_IFACE_ENTRY_WR))
            vm_map_flags |= DRM_PANTHOR_VM_BIND_OP_MAP_READONLY;
        if (!(hdr.flags & CSF_FW_BINARY_IFACE_ENTRY_EX))
            vm_map_flags |= DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC;
        // The coherent cache modes are mapped non-cacheable too: there is no IOMMU attribute yet
        // for shareable-but-cached memory on IO-coherent systems.
        if (cache_mode != CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_CACHED)
            vm_map_flags |= DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED;

        panthor_kernel_bo* mem = panthor_kernel_bo_create(ptdev, pfw->vm, section_size, DRM_PANTHOR_BO_NO_MMAP,
                                                          vm_map_flags, hdr.va.start, "FW section");
        if (kshim::IS_ERR(mem))
            return static_cast<int>(kshim::PTR_ERR(mem));
        section->mem = mem;

        if (WARN_ON(panthor_kernel_bo_gpuva(mem) != hdr.va.start))
            return -EINVAL;

        if (section->flags & CSF_FW_BINARY_IFACE_ENTRY_SHARED) {
            ret = panthor_kernel_bo_vmap(mem);
            if (ret)
                return ret;
        }

        ret = panthor_fw_init_section_mem(ptdev, section);
        if (ret)
            return ret;
    }

    if (is_shared_region)
        pfw->shared_section = section;

    return 0;
}

int panthor_fw_read_build_info(panthor_device* ptdev, const kshim::firmware* fw, panthor_fw_binary_iter* iter,
                               u32 ehdr) {
    (void)ehdr;
    panthor_fw* pfw = ptdev->fw;
    constexpr size_t tag_len = sizeof(BUILD_INFO_GIT_SHA_TAG) - 1;
    panthor_fw_build_info_hdr hdr;

    // The build info is informative only: nothing in it can fail the load.
    if (iter->size - iter->offset < sizeof(hdr)) {
        dev_err(ptdev->dev, "Firmware build info corrupt");
        return 0;
    }
    std::memcpy(&hdr, iter->data + iter->offset, sizeof(hdr));
    iter->offset += sizeof(hdr);

    if (hdr.meta_start > fw->size || u64{hdr.meta_start} + hdr.meta_size > fw->size) {
        dev_err(ptdev->dev, "Firmware build info corrupt");
        return 0;
    }

    // Not the metadata we understand.
    if (hdr.meta_size < tag_len || std::memcmp(BUILD_INFO_GIT_SHA_TAG, fw->data + hdr.meta_start, tag_len) != 0)
        return 0;

    if (hdr.meta_size == tag_len || fw->data[hdr.meta_start + hdr.meta_size - 1] != '\0') {
        dev_warn(ptdev->dev, "Firmware's git sha is not NULL terminated");
        return 0;
    }

    const char* sha = reinterpret_cast<const char*>(fw->data + hdr.meta_start + tag_len);
    dev_info(ptdev->dev, "Firmware git sha: %s", sha);

    const size_t len = std::strlen(sha);
    auto* copy = static_cast<char*>(kshim::kmalloc(len + 1, kshim::GFP_KERNEL));
    if (copy) {
        std::memcpy(copy, sha, len + 1);
        kshim::kfree(pfw->git_sha);
        pfw->git_sha = copy;
    }
    return 0;
}

// A slow restart re-copies every section (read-only ones included: the point is to recover from
// a corruption); the partial form re-initialises only the sections the FW may write.
int panthor_reload_fw_sections(panthor_device* ptdev, bool full_reload) {
    for (panthor_fw_section& section : ptdev->fw->sections) {
        if (!section.mem)
            continue;
        if (!full_reload && !(section.flags & CSF_FW_BINARY_IFACE_ENTRY_WR))
            continue;
        const int ret = panthor_fw_init_section_mem(ptdev, &section);
        if (ret) {
            dev_err(ptdev->dev, "Failed to reload FW section 0x%x-0x%x (%d)", section.va_start, section.va_end, ret);
            return ret;
        }
    }
    return 0;
}

int panthor_fw_load_entry(panthor_device* ptdev, const kshim::firmware* fw, panthor_fw_binary_iter* iter) {
    panthor_fw_binary_iter eiter;
    u32 ehdr;

    int ret = panthor_fw_binary_iter_read(ptdev, iter, &ehdr, sizeof(ehdr));
    if (ret)
        return ret;

    const u32 entry_size = CSF_FW_BINARY_ENTRY_SIZE(ehdr);
    if ((iter->offset % sizeof(u32)) || (entry_size % sizeof(u32))) {
        dev_err(ptdev->dev, "Firmware entry isn't 32 bit aligned, offset=0x%x size=0x%x",
                static_cast<u32>(iter->offset - sizeof(u32)), entry_size);
        return -EINVAL;
    }

    // The size counts the entry header itself.
    if (entry_size < sizeof(ehdr)) {
        dev_err(ptdev->dev, "Firmware entry too short, offset=0x%x size=0x%x",
                static_cast<u32>(iter->offset - sizeof(u32)), entry_size);
        return -EINVAL;
    }

    if (panthor_fw_binary_sub_iter_init(ptdev, iter, &eiter, entry_size - sizeof(ehdr)))
        return -EINVAL;

    switch (CSF_FW_BINARY_ENTRY_TYPE(ehdr)) {
    case CSF_FW_BINARY_ENTRY_TYPE_IFACE: return panthor_fw_load_section_entry(ptdev, fw, &eiter, ehdr);
    case CSF_FW_BINARY_ENTRY_TYPE_BUILD_INFO_METADATA: return panthor_fw_read_build_info(ptdev, fw, &eiter, ehdr);

    // Not used by panthor.
    case CSF_FW_BINARY_ENTRY_TYPE_CONFIG:
    case CSF_FW_BINARY_ENTRY_TYPE_FUTF_TEST:
    case CSF_FW_BINARY_ENTRY_TYPE_TRACE_BUFFER:
    case CSF_FW_BINARY_ENTRY_TYPE_TIMELINE_METADATA: return 0;
    default: break;
    }

    if (ehdr & CSF_FW_BINARY_ENTRY_OPTIONAL)
        return 0;

    dev_err(ptdev->dev, "Unsupported non-optional entry type %u in firmware", CSF_FW_BINARY_ENTRY_TYPE(ehdr));
    return -EINVAL;
}

int panthor_fw_load(panthor_device* ptdev) {
    const kshim::firmware* fw = nullptr;
    panthor_fw_binary_iter iter{};
    panthor_fw_binary_hdr hdr;

    const std::string fw_path = panthor_fw_file_name(ptdev);
    int ret = kshim::request_firmware(&fw, fw_path.c_str(), ptdev->dev);
    if (ret) {
        dev_err(ptdev->dev, "Failed to load firmware image '%s'", CSF_FW_NAME);
        return ret;
    }

    iter.data = fw->data;
    iter.size = fw->size;
    ret = panthor_fw_binary_iter_read(ptdev, &iter, &hdr, sizeof(hdr));
    if (ret)
        goto out;

    if (hdr.magic != CSF_FW_BINARY_HEADER_MAGIC) {
        ret = -EINVAL;
        dev_err(ptdev->dev, "Invalid firmware magic");
        goto out;
    }

    if (hdr.major != CSF_FW_BINARY_HEADER_MAJOR_MAX) {
        ret = -EINVAL;
        dev_err(ptdev->dev, "Unsupported firmware binary header version %d.%d (expected %d.x)", hdr.major, hdr.minor,
                CSF_FW_BINARY_HEADER_MAJOR_MAX);
        goto out;
    }

    if (hdr.size > iter.size) {
        ret = -EINVAL;
        dev_err(ptdev->dev, "Firmware image is truncated");
        goto out;
    }

    iter.size = hdr.size;

    while (iter.offset < hdr.size) {
        ret = panthor_fw_load_entry(ptdev, fw, &iter);
        if (ret)
            goto out;
    }

    if (!ptdev->fw->shared_section) {
        dev_err(ptdev->dev, "Shared interface region not found");
        ret = -EINVAL;
        goto out;
    }

out:
    kshim::release_firmware(fw);
    return ret;
}

// The CPU address of an interface block of `size` bytes at MCU VA `mcu_va`, or null when the block
// is not entirely inside the shared section or is misaligned for its fields.
void* iface_fw_to_cpu_addr(panthor_device* ptdev, u32 mcu_va, size_t size, size_t align) {
    panthor_kernel_bo* mem = ptdev->fw->shared_section->mem;
    const u64 shared_mem_start = panthor_kernel_bo_gpuva(mem);
    const u64 shared_mem_end = shared_mem_start + panthor_kernel_bo_size(mem);

    if (mcu_va < shared_mem_start || u64{mcu_va} + size > shared_mem_end || (mcu_va % align))
        return nullptr;

    return static_cast<u8*>(mem->kmap) + (mcu_va - shared_mem_start);
}

template <class T>
T* iface_block(panthor_device* ptdev, u32 mcu_va) {
    return static_cast<T*>(iface_fw_to_cpu_addr(ptdev, mcu_va, sizeof(T), alignof(T)));
}

u64 panthor_fw_shared_section_size(panthor_device* ptdev) {
    return panthor_kernel_bo_size(ptdev->fw->shared_section->mem);
}

u64 panthor_fw_csg_control_offset(panthor_device* ptdev, u32 csg_idx) {
    const panthor_fw_global_iface* glb_iface = &ptdev->fw->iface.global;
    return CSF_GROUP_CONTROL_OFFSET + u64{csg_idx} * fw_read_once(glb_iface->control->group_stride);
}

int panthor_init_cs_iface(panthor_device* ptdev, u32 csg_idx, u32 cs_idx) {
    panthor_fw* fw = ptdev->fw;
    const panthor_fw_csg_iface* csg_iface = &fw->iface.groups[csg_idx];
    panthor_fw_cs_iface* cs_iface = &fw->iface.streams[csg_idx][cs_idx];
    const panthor_fw_cs_iface* first_cs_iface = &fw->iface.streams[0][0];
    const u64 iface_offset = panthor_fw_csg_control_offset(ptdev, csg_idx) + CSF_STREAM_CONTROL_OFFSET +
                             u64{cs_idx} * fw_read_once(csg_iface->control->stream_stride);

    if (iface_offset + sizeof(panthor_fw_cs_control_iface) > panthor_fw_shared_section_size(ptdev)) {
        dev_err(ptdev->dev, "Stream control interface %u.%u outside the shared section", csg_idx, cs_idx);
        return -EINVAL;
    }

    cs_iface->control = reinterpret_cast<const panthor_fw_cs_control_iface*>(
        static_cast<u8*>(fw->shared_section->mem->kmap) + iface_offset);
    cs_iface->input = iface_block<panthor_fw_cs_input_iface>(ptdev, fw_read_once(cs_iface->control->input_va));
    cs_iface->output = iface_block<const panthor_fw_cs_output_iface>(ptdev, fw_read_once(cs_iface->control->output_va));

    if (!cs_iface->input || !cs_iface->output) {
        dev_err(ptdev->dev, "Invalid stream control interface input/output VA");
        return -EINVAL;
    }

    if (cs_iface != first_cs_iface &&
        fw_read_once(cs_iface->control->features) != fw_read_once(first_cs_iface->control->features)) {
        dev_err(ptdev->dev, "Expecting identical CS slots");
        return -EINVAL;
    }

    return 0;
}

bool compare_csg(const panthor_fw_csg_control_iface* a, const panthor_fw_csg_control_iface* b) {
    return fw_read_once(a->features) == fw_read_once(b->features) &&
           fw_read_once(a->suspend_size) == fw_read_once(b->suspend_size) &&
           fw_read_once(a->protm_suspend_size) == fw_read_once(b->protm_suspend_size) &&
           fw_read_once(a->stream_num) == fw_read_once(b->stream_num);
}

int panthor_init_csg_iface(panthor_device* ptdev, u32 csg_idx) {
    panthor_fw* fw = ptdev->fw;
    const panthor_fw_global_iface* glb_iface = &fw->iface.global;
    panthor_fw_csg_iface* csg_iface = &fw->iface.groups[csg_idx];
    const u64 iface_offset = panthor_fw_csg_control_offset(ptdev, csg_idx);

    if (iface_offset + sizeof(panthor_fw_csg_control_iface) > panthor_fw_shared_section_size(ptdev)) {
        dev_err(ptdev->dev, "Group control interface %u outside the shared section", csg_idx);
        return -EINVAL;
    }

    csg_iface->control = reinterpret_cast<const panthor_fw_csg_control_iface*>(
        static_cast<u8*>(fw->shared_section->mem->kmap) + iface_offset);
    csg_iface->input = iface_block<panthor_fw_csg_input_iface>(ptdev, fw_read_once(csg_iface->control->input_va));
    csg_iface->output =
        iface_block<const panthor_fw_csg_output_iface>(ptdev, fw_read_once(csg_iface->control->output_va));

    const u32 stream_num = fw_read_once(csg_iface->control->stream_num);
    if (stream_num < MIN_CS_PER_CSG || stream_num > MAX_CS_PER_CSG) {
        dev_err(ptdev->dev, "Invalid number of command streams (%u) in group %u", stream_num, csg_idx);
        return -EINVAL;
    }

    // Stream control blocks must not overlap each other nor spill into the next group's.
    const u32 stream_stride = fw_read_once(csg_iface->control->stream_stride);
    if (stream_stride < sizeof(panthor_fw_cs_control_iface) || stream_stride % alignof(panthor_fw_cs_control_iface)) {
        dev_err(ptdev->dev, "Invalid stream control stride 0x%x in group %u", stream_stride, csg_idx);
        return -EINVAL;
    }
    const u32 group_stride = fw_read_once(glb_iface->control->group_stride);
    if (group_stride < CSF_STREAM_CONTROL_OFFSET + u64{stream_num} * stream_stride ||
        group_stride % alignof(panthor_fw_csg_control_iface)) {
        dev_err(ptdev->dev, "Invalid group control stride 0x%x", group_stride);
        return -EINVAL;
    }

    if (!csg_iface->input || !csg_iface->output) {
        dev_err(ptdev->dev, "Invalid group control interface input/output VA");
        return -EINVAL;
    }

    if (csg_idx > 0 && !compare_csg(fw->iface.groups[0].control, csg_iface->control)) {
        dev_err(ptdev->dev, "Expecting identical CSG slots");
        return -EINVAL;
    }

    for (u32 i = 0; i < stream_num; i++) {
        const int ret = panthor_init_cs_iface(ptdev, csg_idx, i);
        if (ret)
            return ret;
    }

    return 0;
}

u32 panthor_get_instr_features(panthor_device* ptdev) {
    const panthor_fw_global_iface* glb_iface = &ptdev->fw->iface.global;

    if (fw_read_once(glb_iface->control->version) < CSF_IFACE_VERSION(1, 1, 0))
        return 0;

    return fw_read_once(glb_iface->control->instr_features);
}

int panthor_fw_init_ifaces(panthor_device* ptdev) {
    panthor_fw* fw = ptdev->fw;
    panthor_fw_global_iface* glb_iface = &fw->iface.global;

    if (!fw->shared_section || !fw->shared_section->mem || !fw->shared_section->mem->kmap ||
        panthor_fw_shared_section_size(ptdev) < sizeof(panthor_fw_global_control_iface)) {
        dev_err(ptdev->dev, "Shared interface section not mapped");
        return -EINVAL;
    }

    glb_iface->control = static_cast<const panthor_fw_global_control_iface*>(fw->shared_section->mem->kmap);

    const u32 version = fw_read_once(glb_iface->control->version);
    if (!version) {
        dev_err(ptdev->dev, "Firmware version is 0. Firmware may have failed to boot");
        return -EINVAL;
    }

    glb_iface->input = iface_block<panthor_fw_global_input_iface>(ptdev, fw_read_once(glb_iface->control->input_va));
    glb_iface->output =
        iface_block<const panthor_fw_global_output_iface>(ptdev, fw_read_once(glb_iface->control->output_va));
    if (!glb_iface->input || !glb_iface->output) {
        dev_err(ptdev->dev, "Invalid global control interface input/output VA");
        return -EINVAL;
    }

    const u32 group_num = fw_read_once(glb_iface->control->group_num);
    if (group_num > MAX_CSGS || group_num < MIN_CSGS) {
        dev_err(ptdev->dev, "Invalid number of control groups");
        return -EINVAL;
    }

    for (u32 i = 0; i < group_num; i++) {
        const int ret = panthor_init_csg_iface(ptdev, i);
        if (ret)
            return ret;
    }

    fw->info.version = version;
    fw->info.features = fw_read_once(glb_iface->control->features);
    fw->info.instr_features = panthor_get_instr_features(ptdev);
    fw->info.group_num = group_num;
    fw->info.stream_num = fw_read_once(fw->iface.groups[0].control->stream_num);

    dev_info(ptdev->dev, "CSF FW using interface v%d.%d.%d, Features %#x Instrumentation features %#x",
             CSF_IFACE_VERSION_MAJOR(version), CSF_IFACE_VERSION_MINOR(version), CSF_IFACE_VERSION_PATCH(version),
             fw->info.features, fw->info.instr_features);
    return 0;
}

void panthor_fw_init_global_iface(panthor_device* ptdev) {
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
    const u32 cfg_reqs = GLB_CFG_ALLOC_EN | GLB_CFG_POWEROFF_TIMER | GLB_CFG_PROGRESS_TIMER;
    u32 acked;

    // Every shader core may be used.
    fw_write_once(glb_iface->input->core_en_mask, static_cast<uint64_t>(ptdev->gpu_info.shader_present));

    fw_write_once(glb_iface->input->poweroff_timer, panthor_fw_conv_timeout(ptdev, PWROFF_HYSTERESIS_US));
    fw_write_once(glb_iface->input->progress_timer,
                  static_cast<u32>(PROGRESS_TIMEOUT_CYCLES >> PROGRESS_TIMEOUT_SCALE_SHIFT));
    fw_write_once(glb_iface->input->idle_timer, panthor_fw_conv_timeout(ptdev, IDLE_HYSTERESIS_US));

    fw_write_once(glb_iface->input->ack_irq_mask, GLB_CFG_ALLOC_EN | GLB_PING | GLB_CFG_PROGRESS_TIMER |
                                                      GLB_CFG_POWEROFF_TIMER | GLB_IDLE_EN | GLB_IDLE | GLB_COUNTER_EN);

    // COUNTER_EN (1.6) propagates the system timestamp to the shader cores, so the timestamps a
    // command stream or shader samples are comparable with GPU_TIMESTAMP. Both are level bits.
    panthor_fw_update_reqs(glb_iface, req, GLB_IDLE_EN | GLB_COUNTER_EN, GLB_IDLE_EN | GLB_COUNTER_EN);
    panthor_fw_toggle_reqs(glb_iface, req, ack, cfg_reqs);

    gpu_write(ptdev, CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);

    // Waiting makes the configuration effective when init/resume returns. A FW that does not
    // answer is not fatal here: the ping watchdog armed below turns it into a reset.
    if (panthor_fw_glb_wait_acks(ptdev, cfg_reqs | GLB_IDLE_EN | GLB_COUNTER_EN, &acked, FW_REQ_TIMEOUT_MS))
        dev_warn(ptdev->dev, "FW global interface configuration not acknowledged (acked=%#x)", acked);

    kshim::mod_delayed_work(ptdev->reset.wq, &ptdev->fw->watchdog.ping_work, kshim::msecs_to_jiffies(PING_INTERVAL_MS));
}

void panthor_job_irq_handler(panthor_device* ptdev, u32 status) {
    panthor_fw* fw = ptdev->fw;

    gpu_write(ptdev, JOB_INT_CLEAR, status);

    if (!fw->booted.load() && (status & JOB_INT_GLOBAL_IF))
        fw->booted.store(true);

    kshim::wake_up_all(&fw->req_waitq);

    // Until the FW has booted, interrupts only mean "booted".
    if (!fw->booted.load())
        return;

    panthor_sched_report_fw_events(ptdev, status);
}

PANTHOR_IRQ_HANDLER(job, JOB, panthor_job_irq_handler)

const char* panthor_mcu_status_str(u32 status) {
    switch (status) {
    case MCU_STATUS_DISABLED: return "disabled";
    case MCU_STATUS_ENABLED: return "enabled";
    case MCU_STATUS_HALT: return "halt";
    case MCU_STATUS_FATAL: return "fatal";
    default: return "unknown";
    }
}

int panthor_fw_start(panthor_device* ptdev) {
    panthor_fw* fw = ptdev->fw;
    bool timedout = false;

    fw->booted.store(false);
    panthor_job_irq_resume(&fw->irq, ~0u);
    gpu_write(ptdev, MCU_CONTROL, MCU_CONTROL_AUTO);

    if (!wait_event_timeout(fw->req_waitq, fw->booted.load(), kshim::msecs_to_jiffies(FW_BOOT_TIMEOUT_MS))) {
        // The interrupt may be pending with its thread not run yet.
        if (!fw->booted.load() && !(gpu_read(ptdev, JOB_INT_STAT) & JOB_INT_GLOBAL_IF))
            timedout = true;
    }

    if (timedout) {
        dev_err(ptdev->dev, "Failed to boot MCU (status=%s)", panthor_mcu_status_str(gpu_read(ptdev, MCU_STATUS)));
        return -ETIMEDOUT;
    }

    return 0;
}

void panthor_fw_stop(panthor_device* ptdev) {
    u32 status;

    gpu_write(ptdev, MCU_CONTROL, MCU_CONTROL_DISABLE);
    if (gpu_read_poll_timeout(ptdev, MCU_STATUS, status, status == MCU_STATUS_DISABLED, MCU_POLL_DELAY_US,
                              MCU_POLL_TIMEOUT_US))
        dev_err(ptdev->dev, "Failed to stop MCU");
}

int panthor_fw_wait_acks(const u32* req_ptr, const u32* ack_ptr, kshim::wait_queue_head* wq, u32 req_mask, u32* acked,
                         u32 timeout_ms) {
    const u32 req = fw_read_once(*req_ptr) & req_mask;
    u32 ack;

    // Most requests are answered within microseconds: spin a little before sleeping.
    *acked = req_mask;
    int ret = read_poll_timeout_atomic(fw_read_once, ack, (ack & req_mask) == req, 0, 10, false, *ack_ptr);
    if (!ret)
        return 0;

    if (wait_event_timeout(*wq, (fw_read_once(*ack_ptr) & req_mask) == req, kshim::msecs_to_jiffies(timeout_ms)))
        return 0;

    // The FW may have acked without an interrupt (or the wake-up was missed).
    ack = fw_read_once(*ack_ptr);
    if ((ack & req_mask) == req)
        return 0;

    *acked = ~(req ^ ack) & req_mask;
    return -ETIMEDOUT;
}

void panthor_fw_ping_work(kshim::work_struct* work) {
    panthor_fw* fw = container_of(kshim::to_delayed_work(work), panthor_fw, watchdog.ping_work);
    panthor_device* ptdev = fw->ptdev;
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
    u32 acked;

    if (panthor_device_reset_is_pending(ptdev))
        return;

    // A device that is not in use is suspended or about to be: the suspend path halts the MCU
    // and the resume path re-arms the watchdog. With runtime PM disabled (< 0) the device is
    // powered as far as the PM core knows, so ping it.
    const int pm_ref = kshim::pm_runtime_get_if_in_use(ptdev->dev);
    if (pm_ref == 0)
        return;

    panthor_fw_toggle_reqs(glb_iface, req, ack, GLB_PING);
    gpu_write(ptdev, CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);

    if (panthor_fw_glb_wait_acks(ptdev, GLB_PING, &acked, FW_REQ_TIMEOUT_MS)) {
        dev_err(ptdev->dev, "FW ping timeout, scheduling a reset");
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_FW_PING_TIMEOUT);
    } else {
        kshim::mod_delayed_work(ptdev->reset.wq, &fw->watchdog.ping_work, kshim::msecs_to_jiffies(PING_INTERVAL_MS));
    }

    if (pm_ref > 0)
        kshim::pm_runtime_put_autosuspend(ptdev->dev);
}

}  // namespace

std::string panthor_fw_file_name(panthor_device* ptdev) {
    return "arm/mali/arch" + std::to_string(GPU_ARCH_MAJOR(ptdev->gpu_info.gpu_id)) + "." +
           std::to_string(GPU_ARCH_MINOR(ptdev->gpu_info.gpu_id)) + "/" + CSF_FW_NAME;
}

panthor_vm* panthor_fw_vm(panthor_device* ptdev) {
    return ptdev->fw->vm;
}

panthor_fw_global_iface* panthor_fw_get_glb_iface(panthor_device* ptdev) {
    return &ptdev->fw->iface.global;
}

panthor_fw_csg_iface* panthor_fw_get_csg_iface(panthor_device* ptdev, u32 csg_slot) {
    if (WARN_ON(csg_slot >= MAX_CSGS))
        return nullptr;
    return &ptdev->fw->iface.groups[csg_slot];
}

panthor_fw_cs_iface* panthor_fw_get_cs_iface(panthor_device* ptdev, u32 csg_slot, u32 cs_slot) {
    if (WARN_ON(csg_slot >= MAX_CSGS || cs_slot >= MAX_CS_PER_CSG))
        return nullptr;
    return &ptdev->fw->iface.streams[csg_slot][cs_slot];
}

const char* panthor_fw_git_sha(panthor_device* ptdev) {
    return ptdev->fw ? ptdev->fw->git_sha : nullptr;
}
u32 panthor_fw_iface_version(panthor_device* ptdev) {
    return ptdev->fw ? ptdev->fw->info.version : 0;
}
u32 panthor_fw_features(panthor_device* ptdev) {
    return ptdev->fw ? ptdev->fw->info.features : 0;
}
u32 panthor_fw_instr_features(panthor_device* ptdev) {
    return ptdev->fw ? ptdev->fw->info.instr_features : 0;
}
u32 panthor_fw_csg_count(panthor_device* ptdev) {
    return ptdev->fw ? ptdev->fw->info.group_num : 0;
}
u32 panthor_fw_cs_count(panthor_device* ptdev) {
    return ptdev->fw ? ptdev->fw->info.stream_num : 0;
}

u32 panthor_fw_section_count(panthor_device* ptdev) {
    if (!ptdev->fw)
        return 0;
    u32 n = 0;
    for (const panthor_fw_section& section : ptdev->fw->sections) {
        (void)section;
        n++;
    }
    return n;
}

panthor_kernel_bo* panthor_fw_alloc_queue_iface_mem(panthor_device* ptdev, panthor_fw_ringbuf_input_iface** input,
                                                    const panthor_fw_ringbuf_output_iface** output, u32* input_fw_va,
                                                    u32* output_fw_va) {
    panthor_kernel_bo* mem =
        panthor_kernel_bo_create(ptdev, ptdev->fw->vm, SZ_8K, DRM_PANTHOR_BO_NO_MMAP,
                                 DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC | DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED,
                                 PANTHOR_VM_KERNEL_AUTO_VA, "Queue FW interface");
    if (kshim::IS_ERR(mem))
        return mem;

    const int ret = panthor_kernel_bo_vmap(mem);
    if (ret) {
        panthor_kernel_bo_destroy(mem);
        return kshim::ERR_PTR<panthor_kernel_bo>(ret);
    }

    auto* kmap = static_cast<u8*>(mem->kmap);
    std::memset(kmap, 0, panthor_kernel_bo_size(mem));
    *input = reinterpret_cast<panthor_fw_ringbuf_input_iface*>(kmap);
    *output = reinterpret_cast<const panthor_fw_ringbuf_output_iface*>(kmap + SZ_4K);
    *input_fw_va = static_cast<u32>(panthor_kernel_bo_gpuva(mem));
    *output_fw_va = *input_fw_va + static_cast<u32>(SZ_4K);
    return mem;
}

panthor_kernel_bo* panthor_fw_alloc_suspend_buf_mem(panthor_device* ptdev, size_t size) {
    return panthor_kernel_bo_create(ptdev, panthor_fw_vm(ptdev), size, DRM_PANTHOR_BO_NO_MMAP,
                                    DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC, PANTHOR_VM_KERNEL_AUTO_VA, "FW suspend buffer");
}

int panthor_fw_glb_wait_acks(panthor_device* ptdev, u32 req_mask, u32* acked, u32 timeout_ms) {
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);

    // GLB_HALT is answered through MCU_STATUS, never in GLB_ACK.
    if (WARN_ON(req_mask & (~GLB_REQ_MASK | GLB_HALT)) || WARN_ON(!glb_iface->input))
        return -EINVAL;

    return panthor_fw_wait_acks(&glb_iface->input->req, &glb_iface->output->ack, &ptdev->fw->req_waitq, req_mask, acked,
                                timeout_ms);
}

int panthor_fw_csg_wait_acks(panthor_device* ptdev, u32 csg_slot, u32 req_mask, u32* acked, u32 timeout_ms) {
    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_slot);

    if (!csg_iface || WARN_ON(req_mask & ~CSG_REQ_MASK) || WARN_ON(!csg_iface->input))
        return -EINVAL;

    const int ret = panthor_fw_wait_acks(&csg_iface->input->req, &csg_iface->output->ack, &ptdev->fw->req_waitq,
                                         req_mask, acked, timeout_ms);

    // The state field is acked as a whole: a partial match means the transition is not done, so
    // callers can test (acked & CSG_STATE_MASK) directly.
    if ((*acked & CSG_STATE_MASK) != CSG_STATE_MASK)
        *acked &= ~CSG_STATE_MASK;

    return ret;
}

void panthor_fw_ring_csg_doorbells(panthor_device* ptdev, u32 csg_mask) {
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);

    panthor_fw_toggle_reqs(glb_iface, doorbell_req, doorbell_ack, csg_mask);
    gpu_write(ptdev, CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
}

void panthor_fw_pre_reset(panthor_device* ptdev, bool on_hang) {
    panthor_fw* fw = ptdev->fw;

    // No ping may race with the halt or run while the MCU is down.
    kshim::cancel_delayed_work_sync(&fw->watchdog.ping_work);

    ptdev->reset.fast = false;

    // A hung FW cannot halt: only try when the reset is not caused by a hang.
    if (!on_hang && fw->iface.global.input) {
        panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
        u32 status;

        panthor_fw_update_reqs(glb_iface, req, GLB_HALT, GLB_HALT);
        gpu_write(ptdev, CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
        if (!gpu_read_poll_timeout(ptdev, MCU_STATUS, status, status == MCU_STATUS_HALT, MCU_POLL_DELAY_US,
                                   MCU_POLL_TIMEOUT_US) &&
            fw_read_once(glb_iface->output->halt_status) == GLB_HALT_STATUS_OK) {
            ptdev->reset.fast = true;
        } else {
            dev_warn(ptdev->dev, "Failed to cleanly suspend MCU");
        }
    }

    panthor_job_irq_suspend(&fw->irq);
}

int panthor_fw_post_reset(panthor_device* ptdev) {
    panthor_fw* fw = ptdev->fw;
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
    int ret;

    ret = panthor_vm_active(fw->vm);
    if (ret)
        return ret;

    if (ptdev->reset.fast) {
        // The FW acts on 0 -> 1 transitions of HALT: clear it before the MCU runs again.
        panthor_fw_update_reqs(glb_iface, req, 0, GLB_HALT);

        ret = panthor_fw_start(ptdev);
        if (!ret)
            goto out;

        // Start from a clean slate: stop the MCU so the next start is a cold boot from freshly
        // reloaded sections.
        panthor_fw_stop(ptdev);
        ptdev->reset.fast = false;
        dev_err(ptdev->dev, "FW fast reset failed, trying a slow reset");

        ret = panthor_vm_flush_all(fw->vm);
        if (ret) {
            dev_err(ptdev->dev, "FW slow reset failed (couldn't flush FW's AS l2cache)");
            return ret;
        }
    }

    // A slow restart of an MCU left halted by a clean suspend (a reset was pending then): a halted
    // MCU restarts warm on the memory the reload below replaces, so the interface it keeps would
    // be the zeroed shared section. Stopping it makes the start a cold boot.
    if (gpu_read(ptdev, MCU_STATUS) == MCU_STATUS_HALT)
        panthor_fw_stop(ptdev);

    // Every section, read-only ones included: a slow reset is the recovery path, so the cost of
    // re-copying everything buys a FW image free of any corruption.
    ret = panthor_reload_fw_sections(ptdev, true);
    if (ret) {
        dev_err(ptdev->dev, "FW slow reset failed (couldn't reload the FW sections)");
        return ret;
    }
    // A reloaded shared section normally has HALT clear already; one without initial data must
    // not keep a HALT left by a halt attempt that timed out.
    panthor_fw_update_reqs(glb_iface, req, 0, GLB_HALT);

    ret = panthor_fw_start(ptdev);
    if (ret) {
        dev_err(ptdev->dev, "FW slow reset failed");
        return ret;
    }

out:
    // The global configuration is the host's to restore, on fast restarts too.
    panthor_fw_init_global_iface(ptdev);
    return 0;
}

void panthor_fw_unplug(panthor_device* ptdev) {
    panthor_fw* fw = ptdev->fw;
    if (!fw)
        return;

    kshim::cancel_delayed_work_sync(&fw->watchdog.ping_work);

    // A suspended device has its MCU halted (or reset), its JOB IRQ masked and its L2 off already.
    const bool active = kshim::pm_runtime_active(ptdev->dev);
    if (active) {
        // No handler may run past this point.
        if (fw->irq.irq)
            panthor_job_irq_suspend(&fw->irq);
        panthor_fw_stop(ptdev);
    }

    panthor_fw_free_sections(fw);
    kshim::kfree(fw->git_sha);
    fw->git_sha = nullptr;

    // panthor_vm_idle is not called: panthor_mmu_unplug releases the AS taken by
    // panthor_vm_active, which keeps the active count balanced without tracking it here.
    if (fw->vm) {
        panthor_vm_put(fw->vm);
        fw->vm = nullptr;
    }

    if (active)
        panthor_gpu_power_off(ptdev, L2, ptdev->gpu_info.l2_present, L2_POWER_OFF_TIMEOUT_US);
}

int panthor_fw_init(panthor_device* ptdev) {
    int ret;

    auto* fw = kshim::knew<panthor_fw>(kshim::GFP_KERNEL);
    if (!fw)
        return -ENOMEM;
    fw->ptdev = ptdev;
    kshim::init_waitqueue_head(&fw->req_waitq);
    INIT_DELAYED_WORK(&fw->watchdog.ping_work, panthor_fw_ping_work);

    // Freed with the device (drmm in upstream); the job IRQ, registered after, goes first.
    ret = kshim::devm_add_action_or_reset(ptdev->dev, [ptdev, fw] {
        kshim::cancel_delayed_work_sync(&fw->watchdog.ping_work);
        panthor_fw_free_sections(fw);
        kshim::kfree(fw->git_sha);
        if (ptdev->fw == fw)
            ptdev->fw = nullptr;
        kshim::kdelete(fw);
    });
    if (ret)
        return ret;
    ptdev->fw = fw;

    kshim::IrqLine* irq = kshim::platform_get_irq_byname(ptdev->pdev, "job");
    if (kshim::IS_ERR_OR_NULL(irq))
        return -ENODEV;

    ret = panthor_request_job_irq(ptdev, &fw->irq, irq, 0);
    if (ret) {
        dev_err(ptdev->dev, "failed to request job irq");
        return ret;
    }

    ret = panthor_gpu_l2_power_on(ptdev);
    if (ret)
        return ret;

    fw->vm = panthor_vm_create(ptdev, true, 0, SZ_4G, CSF_MCU_SHARED_REGION_START, CSF_MCU_SHARED_REGION_SIZE);
    if (kshim::IS_ERR_OR_NULL(fw->vm)) {
        ret = fw->vm ? static_cast<int>(kshim::PTR_ERR(fw->vm)) : -ENOMEM;
        fw->vm = nullptr;
        goto err_unplug_fw;
    }

    ret = panthor_fw_load(ptdev);
    if (ret)
        goto err_unplug_fw;

    ret = panthor_vm_active(fw->vm);
    if (ret)
        goto err_unplug_fw;

    ret = panthor_fw_start(ptdev);
    if (ret)
        goto err_unplug_fw;

    ret = panthor_fw_init_ifaces(ptdev);
    if (ret)
        goto err_unplug_fw;

    panthor_fw_init_global_iface(ptdev);
    return 0;

err_unplug_fw:
    panthor_fw_unplug(ptdev);
    return ret;
}

}  // namespace panthor
