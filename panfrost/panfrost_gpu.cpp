// Mirrors drivers/gpu/drm/panfrost/panfrost_gpu.c: GPU_CONTROL of a Job Manager GPU.
//
// DOC: The identity registers are read once, after the probe's soft reset, into
// panfrost_features; the model table turns GPU_ID into the model's feature and issue bits
// (hw/jm/models.h holds the facts), and an id no entry matches fails the probe with -ENODEV, as
// kernels since the JM-context series do. The quirk registers are written at every power-on,
// since a reset returns them to their defaults. Power transitions are polled (POWER_CHANGED is
// never unmasked); their failures are logged only, as upstream.
#include "panfrost/panfrost_gpu.h"

#include <bit>

#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "panfrost/panfrost_perfcnt.h"
#include "uapi/drm/panfrost_drm.h"

// Polls a register through the runtime (virtual time passes in simulated mode). Local: panthor's
// header defines a macro of the same name, and a host includes both drivers.
#define gpu_read_poll_timeout(dev, reg, val, cond, delay_us, timeout_us) \
    read_poll_timeout(::panfrost::gpu_read, val, cond, delay_us, timeout_us, false, dev, reg)

namespace panfrost {

namespace {

// Revisions of a model with issues on top of the model's own (major << 12 | minor << 4 | status).
struct panfrost_model_rev {
    u32 revision;
    u64 issues;
};

struct panfrost_model {
    const char* name;
    u32 id;  // compared with panfrost_model_eq
    u64 features;
    u64 issues;
    panfrost_model_rev revs[2];
};

// The models whose feature and issue sets the hardware contract states (hw/jm/models.h). The
// other ids upstream knows (T6xx/T7xx/T8xx, G71/G72/G51/G76/G31) need their facts there first;
// until then they probe like any unknown GPU.
constexpr panfrost_model gpu_models[] = {
    {kModelT860.name, kModelT860.product_id, kModelT860.features, kModelT860.issues, {}},
    {kModelG52.name, kModelG52.product_id, kModelG52.features, kModelG52.issues, {}},
    {kModelG57.name,
     kModelG57.product_id,
     kModelG57.features,
     kModelG57.issues,
     {{gpu_revision(0, 0), kG57R0p0ExtraIssues}}},
    // The MediaTek parts' G57 ids (0x9003 after masking; MT8188/MT8370 report 0x9093).
    {kModelG57.name, 0x9003, kModelG57.features, kModelG57.issues, {{gpu_revision(0, 0), kG57R0p0ExtraIssues}}},
};

constexpr u32 GPU_IRQ_MASK_HANDLED =
    GPU_IRQ_MASK_ERROR | GPU_IRQ_PERFCNT_SAMPLE_COMPLETED | GPU_IRQ_CLEAN_CACHES_COMPLETED;
static_assert(GPU_IRQ_MASK_HANDLED == 0x00030081);

kshim::irqreturn_t panfrost_gpu_irq_handler(int, void* data) {
    auto* pfdev = static_cast<panfrost_device*>(data);

    // The line is shared: a suspended GPU's registers are not ours to read.
    if (pfdev->is_suspended.load() & (1u << PANFROST_COMP_BIT_GPU))
        return kshim::IRQ_NONE;

    const u32 state = gpu_read(pfdev, GPU_INT_STAT);
    if (!state)
        return kshim::IRQ_NONE;

    if (state & GPU_IRQ_MASK_ERROR) {
        const u32 fault_status = gpu_read(pfdev, GPU_FAULT_STATUS);
        const u64 address = gpu_read64(pfdev, GPU_FAULT_ADDRESS);
        dev_warn(pfdev->dev, "GPU Fault 0x%08x (%s) at 0x%016llx", fault_status,
                 panfrost_exception_name(fault_status & GPU_FAULT_STATUS_EXCEPTION_TYPE_MASK),
                 static_cast<unsigned long long>(address));
        if (state & GPU_IRQ_MULTIPLE_FAULT)
            dev_warn(pfdev->dev, "There were multiple GPU faults - some have not been reported");
        // Nothing recovers a GPU fault here: further interrupts stay off until the next reset.
        gpu_write(pfdev, GPU_INT_MASK, 0);
    }

    if (state & GPU_IRQ_PERFCNT_SAMPLE_COMPLETED)
        panfrost_perfcnt_sample_done(pfdev);
    if (state & GPU_IRQ_CLEAN_CACHES_COMPLETED)
        panfrost_perfcnt_clean_cache_done(pfdev);

    gpu_write(pfdev, GPU_INT_CLEAR, state);
    return kshim::IRQ_HANDLED;
}

void panfrost_gpu_init_quirks(panfrost_device* pfdev) {
    u32 quirks = 0;

    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_8443) || panfrost_has_hw_issue(pfdev, HW_ISSUE_11035))
        quirks |= SC_LS_PAUSEBUFFER_DISABLE;
    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_10327))
        quirks |= SC_SDC_DISABLE_OQ_DISCARD;
    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_10797))
        quirks |= SC_ENABLE_TEXGRD_FLAGS;
    if (!panfrost_has_hw_issue(pfdev, GPUCORE_1619)) {
        if (panfrost_model_cmp(pfdev, 0x750) < 0)  // T60x, T62x, T72x
            quirks |= SC_LS_ATTR_CHECK_DISABLE;
        else if (panfrost_model_cmp(pfdev, 0x880) <= 0)  // T76x, T8xx
            quirks |= SC_LS_ALLOW_ATTR_TYPES;
    }
    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_TTRX_2968_TTRX_3162))
        quirks |= SC_VAR_ALGORITHM;
    if (panfrost_has_hw_feature(pfdev, HW_FEATURE_TLS_HASHING))
        quirks |= SC_TLS_HASH_ENABLE;
    if (quirks)
        gpu_write(pfdev, GPU_SHADER_CONFIG, quirks);

    // TILER_CONFIG keeps the bits it has: read, modify, write back.
    quirks = gpu_read(pfdev, GPU_TILER_CONFIG);
    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_T76X_3953))
        quirks |= TC_CLOCK_GATE_OVERRIDE;
    gpu_write(pfdev, GPU_TILER_CONFIG, quirks);

    quirks = 0;
    if ((panfrost_model_eq(pfdev, 0x860) || panfrost_model_eq(pfdev, 0x880)) && pfdev->features.revision >= 0x2000)
        quirks |= JM_MAX_JOB_THROTTLE_LIMIT << JM_JOB_THROTTLE_LIMIT_SHIFT;
    else if (panfrost_model_eq(pfdev, 0x6000) && pfdev->features.coherency_features == COHERENCY_ACE)
        quirks |= (COHERENCY_ACE_LITE | COHERENCY_ACE) << JM_FORCE_COHERENCY_FEATURES_SHIFT;
    if (panfrost_has_hw_feature(pfdev, HW_FEATURE_IDVS_GROUP_SIZE))
        quirks |= JM_DEFAULT_IDVS_GROUP_SIZE << JM_IDVS_GROUP_SIZE_SHIFT;
    if (quirks)
        gpu_write(pfdev, GPU_JM_CONFIG, quirks);

    if (pfdev->comp->vendor_quirk)
        pfdev->comp->vendor_quirk(pfdev);
}

int panfrost_gpu_init_features(panfrost_device* pfdev) {
    panfrost_features& f = pfdev->features;

    f.l2_features = gpu_read(pfdev, GPU_L2_FEATURES);
    f.core_features = gpu_read(pfdev, GPU_CORE_FEATURES);
    f.tiler_features = gpu_read(pfdev, GPU_TILER_FEATURES);
    f.mem_features = gpu_read(pfdev, GPU_MEM_FEATURES);
    f.mmu_features = gpu_read(pfdev, GPU_MMU_FEATURES);
    f.thread_features = gpu_read(pfdev, GPU_THREAD_FEATURES);
    f.max_threads = gpu_read(pfdev, GPU_THREAD_MAX_THREADS);
    f.thread_max_workgroup_sz = gpu_read(pfdev, GPU_THREAD_MAX_WORKGROUP_SIZE);
    f.thread_max_barrier_sz = gpu_read(pfdev, GPU_THREAD_MAX_BARRIER_SIZE);
    f.afbc_features = gpu_read(pfdev, GPU_AFBC_FEATURES);
    for (u32 i = 0; i < GPU_TEXTURE_FEATURES_COUNT; i++)
        f.texture_features[i] = gpu_read(pfdev, GPU_TEXTURE_FEATURES(i));
    f.as_present = gpu_read(pfdev, GPU_AS_PRESENT);
    f.js_present = gpu_read(pfdev, GPU_JS_PRESENT);
    // As upstream: the first popcount(JS_PRESENT) slots, so a sparse mask reads low slots only.
    const int num_js = std::popcount(f.js_present);
    for (int i = 0; i < num_js && i < static_cast<int>(GPU_JS_FEATURES_COUNT); i++)
        f.js_features[i] = gpu_read(pfdev, GPU_JS_FEATURES(i));
    f.shader_present = gpu_read64(pfdev, GPU_SHADER_PRESENT);
    f.tiler_present = gpu_read64(pfdev, GPU_TILER_PRESENT);
    f.l2_present = gpu_read64(pfdev, GPU_L2_PRESENT);
    f.nr_core_groups = static_cast<u32>(std::popcount(f.l2_present));
    f.stack_present = gpu_read64(pfdev, GPU_STACK_PRESENT_LO);
    f.thread_tls_alloc = gpu_read(pfdev, GPU_THREAD_TLS_ALLOC);

    const u32 gpu_id = gpu_read(pfdev, GPU_ID);
    f.revision = GPU_ID_REVISION(gpu_id);
    f.id = GPU_ID_PRODUCT(gpu_id);
    // The T60x's id is not in the Midgard format: userspace and the table see 0x0600.
    if (f.id == GPU_ID_T60X_RAW)
        f.id = 0x0600;

    const u32 major = GPU_VER_MAJOR(gpu_id);
    const u32 minor = GPU_VER_MINOR(gpu_id);
    const u32 status = GPU_VER_STATUS(gpu_id);
    const u32 rev = f.revision;

    const panfrost_model* model = nullptr;
    for (const panfrost_model& m : gpu_models) {
        if (panfrost_model_eq(pfdev, static_cast<s32>(m.id))) {
            model = &m;
            break;
        }
    }
    if (!model) {
        dev_err(pfdev->dev, "GPU model not found: mali-%s id 0x%x major 0x%x minor 0x%x status 0x%x", "unknown", f.id,
                major, minor, status);
        return -ENODEV;
    }

    u64 hw_issues = kHwIssuesAll | model->issues;
    // An exact revision wins; else the entry for the same rNpN whatever the status.
    int best = -1;
    for (int i = 0; i < static_cast<int>(std::size(model->revs)); i++) {
        if (!model->revs[i].issues)
            continue;
        if (model->revs[i].revision == rev) {
            best = i;
            break;
        }
        if (model->revs[i].revision == (rev & ~0xFu))
            best = i;
    }
    if (best >= 0)
        hw_issues |= model->revs[best].issues;
    f.hw_features = std::bitset<HW_FEATURES_END>(model->features);
    f.hw_issues = std::bitset<HW_ISSUE_END>(hw_issues);

    // Without the register, a GPU speaks ACE-Lite only.
    f.coherency_features = panfrost_has_hw_feature(pfdev, HW_FEATURE_COHERENCY_REG)
                               ? gpu_read(pfdev, GPU_COHERENCY_FEATURES)
                               : COHERENCY_ACE_LITE;

    dev_info(pfdev->dev, "mali-%s id 0x%x major 0x%x minor 0x%x status 0x%x", model->name, f.id, major, minor, status);
    dev_info(pfdev->dev, "features: %#llx, issues: %#llx", static_cast<unsigned long long>(model->features),
             static_cast<unsigned long long>(hw_issues));
    dev_info(pfdev->dev, "Features: L2:0x%08x Shader:0x%08x Tiler:0x%08x Mem:0x%0x MMU:0x%08x AS:0x%x JS:0x%x",
             f.l2_features, f.core_features, f.tiler_features, f.mem_features, f.mmu_features, f.as_present,
             f.js_present);
    dev_info(pfdev->dev, "shader_present=0x%0llx l2_present=0x%0llx", static_cast<unsigned long long>(f.shader_present),
             static_cast<unsigned long long>(f.l2_present));
    return 0;
}

// DRM_PANFROST_GPU_COHERENCY_*: what a DMA-coherent platform uses, NONE on a non-coherent one.
int panfrost_gpu_select_coherency(panfrost_device* pfdev) {
    panfrost_features& f = pfdev->features;
    if (!pfdev->coherent) {
        f.selected_coherency = DRM_PANFROST_GPU_COHERENCY_NONE;
    } else if (f.coherency_features & COHERENCY_ACE) {
        f.selected_coherency = DRM_PANFROST_GPU_COHERENCY_ACE;
    } else if (f.coherency_features & COHERENCY_ACE_LITE) {
        f.selected_coherency = DRM_PANFROST_GPU_COHERENCY_ACE_LITE;
    } else {
        dev_err(pfdev->dev, "No known coherency protocol supported");
        return -ENOTSUPP;
    }
    return 0;
}

// All cores behind one L2; with several core groups, only the first (not supported upstream either).
u64 panfrost_get_core_mask(panfrost_device* pfdev) {
    const u64 l2_present = pfdev->features.l2_present;
    if (l2_present == 1)
        return ~0ull;
    const u64 core_mask = ~(l2_present - 1) & (l2_present - 2);
    dev_info(pfdev->dev, "using only 1st core group (%d cores from %d)", std::popcount(core_mask),
             std::popcount(pfdev->features.shader_present));
    return core_mask;
}

// Waits until the reset the caller issued raised RESET_COMPLETED.
int panfrost_gpu_wait_reset(panfrost_device* pfdev, u32 delay_us) {
    u32 val;
    return gpu_read_poll_timeout(pfdev, GPU_INT_RAWSTAT, val, val & GPU_IRQ_RESET_COMPLETED, delay_us, 10000);
}

}  // namespace

int panfrost_gpu_soft_reset(panfrost_device* pfdev) {
    gpu_write(pfdev, GPU_INT_MASK, 0);
    gpu_write(pfdev, GPU_INT_CLEAR, GPU_IRQ_RESET_COMPLETED);
    pfdev->is_suspended.fetch_and(~(1u << PANFROST_COMP_BIT_GPU));

    gpu_write(pfdev, GPU_CMD, GPU_CMD_SOFT_RESET);
    int ret = panfrost_gpu_wait_reset(pfdev, 10);
    if (ret) {
        dev_err(pfdev->dev, "gpu soft reset timed out, attempting hard reset");
        gpu_write(pfdev, GPU_CMD, GPU_CMD_HARD_RESET);
        ret = panfrost_gpu_wait_reset(pfdev, 100);
        if (ret) {
            dev_err(pfdev->dev, "gpu hard reset timed out");
            return ret;
        }
    }

    gpu_write(pfdev, GPU_INT_CLEAR, GPU_IRQ_MASK_ALL);
    gpu_write(pfdev, GPU_INT_MASK, GPU_IRQ_MASK_HANDLED);

    // A reset stops the cycle counter: whoever held it has lost it.
    kshim::SpinGuard g(pfdev->cycle_counter.lock);
    pfdev->cycle_counter.use_count.store(0);
    return 0;
}

void panfrost_gpu_amlogic_quirk(panfrost_device* pfdev) {
    // Undocumented bits the Amlogic integrations need to run at all.
    gpu_write(pfdev, GPU_PWR_KEY, GPU_PWR_KEY_UNLOCK);
    gpu_write(pfdev, GPU_PWR_OVERRIDE1, GPU_PWR_OVERRIDE1_AMLOGIC);
}

void panfrost_gpu_power_on(panfrost_device* pfdev) {
    const panfrost_features& f = pfdev->features;
    u32 val;

    panfrost_gpu_init_quirks(pfdev);
    const u64 core_mask = panfrost_get_core_mask(pfdev);

    const u32 l2 = static_cast<u32>(f.l2_present & core_mask);
    gpu_write(pfdev, L2_PWRON_LO, l2);
    if (gpu_read_poll_timeout(pfdev, L2_READY_LO, val, val == l2, 10, 20000))
        dev_err(pfdev->dev, "error powering up gpu L2");

    const u32 shader = static_cast<u32>(f.shader_present & core_mask);
    gpu_write(pfdev, SHADER_PWRON_LO, shader);
    if (gpu_read_poll_timeout(pfdev, SHADER_READY_LO, val, val == shader, 10, 20000))
        dev_err(pfdev->dev, "error powering up gpu shader");

    const u32 tiler = static_cast<u32>(f.tiler_present);
    gpu_write(pfdev, TILER_PWRON_LO, tiler);
    if (gpu_read_poll_timeout(pfdev, TILER_READY_LO, val, val == tiler, 10, 1000))
        dev_err(pfdev->dev, "error powering up gpu tiler");
}

void panfrost_gpu_power_off(panfrost_device* pfdev) {
    const panfrost_features& f = pfdev->features;
    u32 val;

    gpu_write(pfdev, SHADER_PWROFF_LO, static_cast<u32>(f.shader_present));
    if (gpu_read_poll_timeout(pfdev, SHADER_PWRTRANS_LO, val, !val, 1, 2000))
        dev_err(pfdev->dev, "shader power transition timeout");

    gpu_write(pfdev, TILER_PWROFF_LO, static_cast<u32>(f.tiler_present));
    if (gpu_read_poll_timeout(pfdev, TILER_PWRTRANS_LO, val, !val, 1, 2000))
        dev_err(pfdev->dev, "tiler power transition timeout");

    gpu_write(pfdev, L2_PWROFF_LO, static_cast<u32>(f.l2_present));
    if (gpu_read_poll_timeout(pfdev, L2_PWRTRANS_LO, val, !val, 1, 2000))
        dev_err(pfdev->dev, "l2 power transition timeout");
}

void panfrost_gpu_suspend_irq(panfrost_device* pfdev) {
    pfdev->is_suspended.fetch_or(1u << PANFROST_COMP_BIT_GPU);
    gpu_write(pfdev, GPU_INT_MASK, 0);
    kshim::synchronize_irq(pfdev->gpu_irq);
}

int panfrost_gpu_init(panfrost_device* pfdev) {
    int err = panfrost_gpu_soft_reset(pfdev);
    if (err)
        return err;

    err = panfrost_gpu_init_features(pfdev);
    if (err)
        return err;

    // The DMA mask (PA bits of MMU_FEATURES) has no meaning for the arena: every page is below 2^40.
    err = panfrost_gpu_select_coherency(pfdev);
    if (err)
        return err;

    kshim::IrqLine* irq = kshim::platform_get_irq_byname(pfdev->pdev, "gpu");
    if (kshim::IS_ERR_OR_NULL(irq))
        return -ENODEV;
    // devm_request_irq: freed with the device's devres, after fini powered the GPU off.
    err = kshim::request_irq(irq, panfrost_gpu_irq_handler, kshim::IRQF_SHARED, "panfrost-gpu", pfdev);
    if (err) {
        dev_err(pfdev->dev, "failed to request gpu irq");
        return err;
    }
    pfdev->gpu_irq = irq;
    err = kshim::devm_add_action_or_reset(pfdev->dev, [pfdev, irq] {
        kshim::free_irq(irq, pfdev);
        pfdev->gpu_irq = nullptr;
    });
    if (err)
        return err;

    panfrost_gpu_power_on(pfdev);
    return 0;
}

void panfrost_gpu_fini(panfrost_device* pfdev) {
    panfrost_gpu_power_off(pfdev);
}

void panfrost_cycle_counter_get(panfrost_device* pfdev) {
    // Fast path: already running, just count one more user.
    int cur = pfdev->cycle_counter.use_count.load();
    while (cur > 0)
        if (pfdev->cycle_counter.use_count.compare_exchange_weak(cur, cur + 1))
            return;
    kshim::SpinGuard g(pfdev->cycle_counter.lock);
    if (pfdev->cycle_counter.use_count.fetch_add(1) == 0)
        gpu_write(pfdev, GPU_CMD, GPU_CMD_CYCLE_COUNT_START);
}

void panfrost_cycle_counter_put(panfrost_device* pfdev) {
    // Fast path: not the last user.
    int cur = pfdev->cycle_counter.use_count.load();
    while (cur > 1)
        if (pfdev->cycle_counter.use_count.compare_exchange_weak(cur, cur - 1))
            return;
    kshim::SpinGuard g(pfdev->cycle_counter.lock);
    // A reset in between forced the count to 0: nothing to stop.
    if (WARN_ON(pfdev->cycle_counter.use_count.load() <= 0))
        return;
    if (pfdev->cycle_counter.use_count.fetch_sub(1) == 1)
        gpu_write(pfdev, GPU_CMD, GPU_CMD_CYCLE_COUNT_STOP);
}

u64 panfrost_cycle_counter_read(panfrost_device* pfdev) {
    return gpu_read64_counter(pfdev, GPU_CYCLE_COUNT);
}

u64 panfrost_timestamp_read(panfrost_device* pfdev) {
    return gpu_read64_counter(pfdev, GPU_TIMESTAMP);
}

u32 panfrost_gpu_get_latest_flush_id(panfrost_device* pfdev) {
    // Flush reduction pays off only while the GPU stays powered between jobs.
    if (panfrost_has_hw_feature(pfdev, HW_FEATURE_FLUSH_REDUCTION) && kshim::pm_runtime_get_if_in_use(pfdev->dev) > 0) {
        const u32 flush_id = gpu_read(pfdev, GPU_LATEST_FLUSH_ID);
        kshim::pm_runtime_put(pfdev->dev);
        return flush_id;
    }
    return 0;
}

}  // namespace panfrost
