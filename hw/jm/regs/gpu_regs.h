// GPU_CONTROL of a Job Manager GPU (Midgard, Bifrost, Valhall-JM) as the panfrost driver uses it:
// mirrors the GPU part of drivers/gpu/drm/panfrost/panfrost_regs.h. Definitions only; shared by
// the driver and the mock. Layout and fields: docs/hw/jm/gpu-control.md.
// 64-bit registers are a LO word at the listed offset and a HI word at +4 (X, X_LO, X_HI).
// Offsets that coincide with the CSF map (identity, IRQ, counters, power domains) are restated
// here on purpose: the values a register holds and the GPU_CMD encoding differ between families,
// so each family's driver and mock include their own header (docs/hw/jm/README.md).
#pragma once
#include <cstdint>

#include "hw/bits.h"

namespace panfrost {

using panthor::BIT;
using panthor::BIT_ULL;
using panthor::GENMASK;
using panthor::GENMASK_ULL;

inline constexpr uint32_t GPU_CONTROL_BASE = 0x0;
inline constexpr uint32_t GPU_CONTROL_SIZE = 0x1000;

// GPU_ID: [31:16] product id, [15:0] revision (major [15:12], minor [11:4], status [3:0]). On
// Bifrost and later the product id splits into arch major [31:28], arch minor [27:24], arch rev
// [23:20] and product major [19:16]; Midgard product ids are plain numbers (0x0860 = T860).
inline constexpr uint32_t GPU_ID = 0x000;
constexpr uint32_t GPU_ID_PRODUCT(uint32_t x) {
    return x >> 16;
}
constexpr uint32_t GPU_ID_REVISION(uint32_t x) {
    return x & 0xFFFF;
}
constexpr uint32_t GPU_ARCH_MAJOR(uint32_t x) {
    return x >> 28;
}
constexpr uint32_t GPU_ARCH_MINOR(uint32_t x) {
    return (x >> 24) & 0xF;
}
constexpr uint32_t GPU_ARCH_REV(uint32_t x) {
    return (x >> 20) & 0xF;
}
constexpr uint32_t GPU_PROD_MAJOR(uint32_t x) {
    return (x >> 16) & 0xF;
}
constexpr uint32_t GPU_VER_MAJOR(uint32_t x) {
    return (x >> 12) & 0xF;
}
constexpr uint32_t GPU_VER_MINOR(uint32_t x) {
    return (x >> 4) & 0xFF;
}
constexpr uint32_t GPU_VER_STATUS(uint32_t x) {
    return x & 0xF;
}
// T60x reports this raw product id; panfrost treats it as 0x0600.
inline constexpr uint32_t GPU_ID_T60X_RAW = 0x6956;

inline constexpr uint32_t GPU_L2_FEATURES = 0x004;
inline constexpr uint32_t GPU_CORE_FEATURES = 0x008;
inline constexpr uint32_t GPU_TILER_FEATURES = 0x00C;
inline constexpr uint32_t GPU_MEM_FEATURES = 0x010;
inline constexpr uint32_t GROUPS_L2_COHERENT = BIT(0);
// MEM_FEATURES [11:8]: number of L2 slices minus one (perfcnt sizing).
constexpr uint32_t GPU_MEM_FEATURES_L2_SLICES(uint32_t x) {
    return ((x >> 8) & 0xF) + 1;
}
inline constexpr uint32_t GPU_MMU_FEATURES = 0x014;
constexpr uint32_t GPU_MMU_FEATURES_VA_BITS(uint32_t x) {
    return x & GENMASK(7, 0);
}
constexpr uint32_t GPU_MMU_FEATURES_PA_BITS(uint32_t x) {
    return (x >> 8) & GENMASK(7, 0);
}
inline constexpr uint32_t GPU_AS_PRESENT = 0x018;
inline constexpr uint32_t GPU_JS_PRESENT = 0x01C;  // CSF GPUs have GPU_CSF_ID here

inline constexpr uint32_t GPU_INT_RAWSTAT = 0x020;
inline constexpr uint32_t GPU_INT_CLEAR = 0x024;
inline constexpr uint32_t GPU_INT_MASK = 0x028;
inline constexpr uint32_t GPU_INT_STAT = 0x02C;
inline constexpr uint32_t GPU_IRQ_FAULT = BIT(0);
inline constexpr uint32_t GPU_IRQ_MULTIPLE_FAULT = BIT(7);
inline constexpr uint32_t GPU_IRQ_RESET_COMPLETED = BIT(8);
inline constexpr uint32_t GPU_IRQ_POWER_CHANGED = BIT(9);
inline constexpr uint32_t GPU_IRQ_POWER_CHANGED_ALL = BIT(10);
inline constexpr uint32_t GPU_IRQ_PERFCNT_SAMPLE_COMPLETED = BIT(16);
inline constexpr uint32_t GPU_IRQ_CLEAN_CACHES_COMPLETED = BIT(17);
inline constexpr uint32_t GPU_IRQ_MASK_ALL = GPU_IRQ_FAULT | GPU_IRQ_MULTIPLE_FAULT | GPU_IRQ_RESET_COMPLETED |
                                             GPU_IRQ_POWER_CHANGED | GPU_IRQ_POWER_CHANGED_ALL |
                                             GPU_IRQ_PERFCNT_SAMPLE_COMPLETED | GPU_IRQ_CLEAN_CACHES_COMPLETED;
inline constexpr uint32_t GPU_IRQ_MASK_ERROR = GPU_IRQ_FAULT | GPU_IRQ_MULTIPLE_FAULT;
static_assert(GPU_IRQ_MASK_ALL == 0x00030781);

// GPU_CMD: plain command numbers on JM GPUs (CSF GPUs use `type | payload << 8`).
inline constexpr uint32_t GPU_CMD = 0x030;
inline constexpr uint32_t GPU_CMD_SOFT_RESET = 0x01;
inline constexpr uint32_t GPU_CMD_HARD_RESET = 0x02;
inline constexpr uint32_t GPU_CMD_PERFCNT_CLEAR = 0x03;
inline constexpr uint32_t GPU_CMD_PERFCNT_SAMPLE = 0x04;
inline constexpr uint32_t GPU_CMD_CYCLE_COUNT_START = 0x05;
inline constexpr uint32_t GPU_CMD_CYCLE_COUNT_STOP = 0x06;
inline constexpr uint32_t GPU_CMD_CLEAN_CACHES = 0x07;
inline constexpr uint32_t GPU_CMD_CLEAN_INV_CACHES = 0x08;

inline constexpr uint32_t GPU_STATUS = 0x034;
inline constexpr uint32_t GPU_STATUS_PRFCNT_ACTIVE = BIT(2);
inline constexpr uint32_t GPU_LATEST_FLUSH_ID = 0x038;

// GPU_FAULT_STATUS [7:0]: exception code (hw/jm/regs/exceptions.h).
inline constexpr uint32_t GPU_FAULT_STATUS = 0x03C;
inline constexpr uint32_t GPU_FAULT_STATUS_EXCEPTION_TYPE_MASK = GENMASK(7, 0);
inline constexpr uint32_t GPU_FAULT_ADDRESS = 0x040;
inline constexpr uint32_t GPU_FAULT_ADDRESS_LO = 0x040;
inline constexpr uint32_t GPU_FAULT_ADDRESS_HI = 0x044;

inline constexpr uint32_t GPU_AFBC_FEATURES = 0x04C;

// Power-manager key and overrides (panfrost writes them on Amlogic SoCs only).
inline constexpr uint32_t GPU_PWR_KEY = 0x050;
inline constexpr uint32_t GPU_PWR_KEY_UNLOCK = 0x2968A819;
inline constexpr uint32_t GPU_PWR_OVERRIDE0 = 0x054;
inline constexpr uint32_t GPU_PWR_OVERRIDE1 = 0x058;
inline constexpr uint32_t GPU_PWR_OVERRIDE1_AMLOGIC = 0x00200FFF;

// Performance counters.
inline constexpr uint32_t GPU_PERFCNT_BASE = 0x060;
inline constexpr uint32_t GPU_PERFCNT_BASE_LO = 0x060;
inline constexpr uint32_t GPU_PERFCNT_BASE_HI = 0x064;
inline constexpr uint32_t GPU_PERFCNT_CFG = 0x068;
inline constexpr uint32_t GPU_PERFCNT_CFG_MODE_OFF = 0;
inline constexpr uint32_t GPU_PERFCNT_CFG_MODE_MANUAL = 1;
inline constexpr uint32_t GPU_PERFCNT_CFG_MODE_TILE = 2;
constexpr uint32_t GPU_PERFCNT_CFG_MODE(uint32_t x) {
    return x;
}
constexpr uint32_t GPU_PERFCNT_CFG_AS(uint32_t x) {
    return x << 4;
}
constexpr uint32_t GPU_PERFCNT_CFG_SETSEL(uint32_t x) {
    return x << 8;
}
inline constexpr uint32_t GPU_PRFCNT_JM_EN = 0x06C;
inline constexpr uint32_t GPU_PRFCNT_SHADER_EN = 0x070;
inline constexpr uint32_t GPU_PRFCNT_TILER_EN = 0x074;
inline constexpr uint32_t GPU_PRFCNT_MMU_L2_EN = 0x07C;

// Free-running counters: read HI, LO, HI and retry until both HI reads agree.
inline constexpr uint32_t GPU_CYCLE_COUNT = 0x090;
inline constexpr uint32_t GPU_CYCLE_COUNT_LO = 0x090;
inline constexpr uint32_t GPU_CYCLE_COUNT_HI = 0x094;
inline constexpr uint32_t GPU_TIMESTAMP = 0x098;
inline constexpr uint32_t GPU_TIMESTAMP_LO = 0x098;
inline constexpr uint32_t GPU_TIMESTAMP_HI = 0x09C;

inline constexpr uint32_t GPU_THREAD_MAX_THREADS = 0x0A0;
inline constexpr uint32_t GPU_THREAD_MAX_WORKGROUP_SIZE = 0x0A4;
inline constexpr uint32_t GPU_THREAD_MAX_BARRIER_SIZE = 0x0A8;
inline constexpr uint32_t GPU_THREAD_FEATURES = 0x0AC;
inline constexpr uint32_t GPU_TEXTURE_FEATURES_COUNT = 4;
constexpr uint32_t GPU_TEXTURE_FEATURES(uint32_t n) {
    return 0x0B0 + n * 4;
}
inline constexpr uint32_t GPU_JS_FEATURES_COUNT = 16;
constexpr uint32_t GPU_JS_FEATURES(uint32_t n) {
    return 0x0C0 + n * 4;
}
static_assert(GPU_TEXTURE_FEATURES(GPU_TEXTURE_FEATURES_COUNT) == GPU_JS_FEATURES(0));
static_assert(GPU_JS_FEATURES(GPU_JS_FEATURES_COUNT) == 0x100);

inline constexpr uint32_t GPU_SHADER_PRESENT = 0x100;
inline constexpr uint32_t GPU_SHADER_PRESENT_LO = 0x100;
inline constexpr uint32_t GPU_SHADER_PRESENT_HI = 0x104;
inline constexpr uint32_t GPU_TILER_PRESENT = 0x110;
inline constexpr uint32_t GPU_TILER_PRESENT_LO = 0x110;
inline constexpr uint32_t GPU_TILER_PRESENT_HI = 0x114;
inline constexpr uint32_t GPU_L2_PRESENT = 0x120;
inline constexpr uint32_t GPU_L2_PRESENT_LO = 0x120;
inline constexpr uint32_t GPU_L2_PRESENT_HI = 0x124;

// Power domains. Every register is 64-bit. A domain's register is its kind's SHADER_* offset plus
// PWR_DOMAIN_{SHADER,TILER,L2}; the kinds are READY (RO), PWRON (WO), PWROFF (WO), PWRTRANS (RO,
// bits in transition) and PWRACTIVE (RO, unused by panfrost).
inline constexpr uint32_t PWR_DOMAIN_SHADER = 0x00;
inline constexpr uint32_t PWR_DOMAIN_TILER = 0x10;
inline constexpr uint32_t PWR_DOMAIN_L2 = 0x20;
inline constexpr uint32_t SHADER_READY_LO = 0x140;
inline constexpr uint32_t SHADER_READY_HI = 0x144;
inline constexpr uint32_t TILER_READY_LO = 0x150;
inline constexpr uint32_t TILER_READY_HI = 0x154;
inline constexpr uint32_t L2_READY_LO = 0x160;
inline constexpr uint32_t L2_READY_HI = 0x164;
inline constexpr uint32_t SHADER_PWRON_LO = 0x180;
inline constexpr uint32_t SHADER_PWRON_HI = 0x184;
inline constexpr uint32_t TILER_PWRON_LO = 0x190;
inline constexpr uint32_t TILER_PWRON_HI = 0x194;
inline constexpr uint32_t L2_PWRON_LO = 0x1A0;
inline constexpr uint32_t L2_PWRON_HI = 0x1A4;
inline constexpr uint32_t SHADER_PWROFF_LO = 0x1C0;
inline constexpr uint32_t SHADER_PWROFF_HI = 0x1C4;
inline constexpr uint32_t TILER_PWROFF_LO = 0x1D0;
inline constexpr uint32_t TILER_PWROFF_HI = 0x1D4;
inline constexpr uint32_t L2_PWROFF_LO = 0x1E0;
inline constexpr uint32_t L2_PWROFF_HI = 0x1E4;
inline constexpr uint32_t SHADER_PWRTRANS_LO = 0x200;
inline constexpr uint32_t SHADER_PWRTRANS_HI = 0x204;
inline constexpr uint32_t TILER_PWRTRANS_LO = 0x210;
inline constexpr uint32_t TILER_PWRTRANS_HI = 0x214;
inline constexpr uint32_t L2_PWRTRANS_LO = 0x220;
inline constexpr uint32_t L2_PWRTRANS_HI = 0x224;
inline constexpr uint32_t SHADER_PWRACTIVE_LO = 0x240;
inline constexpr uint32_t SHADER_PWRACTIVE_HI = 0x244;
inline constexpr uint32_t TILER_PWRACTIVE_LO = 0x250;
inline constexpr uint32_t TILER_PWRACTIVE_HI = 0x254;
inline constexpr uint32_t L2_PWRACTIVE_LO = 0x260;
inline constexpr uint32_t L2_PWRACTIVE_HI = 0x264;
static_assert(TILER_READY_LO == SHADER_READY_LO + PWR_DOMAIN_TILER && L2_READY_LO == SHADER_READY_LO + PWR_DOMAIN_L2);
static_assert(L2_PWRON_LO == SHADER_PWRON_LO + PWR_DOMAIN_L2 && L2_PWROFF_LO == SHADER_PWROFF_LO + PWR_DOMAIN_L2);
static_assert(L2_PWRTRANS_LO == SHADER_PWRTRANS_LO + PWR_DOMAIN_L2 && L2_PWRACTIVE_LO == SHADER_PWRACTIVE_LO + 0x20);
static_assert(SHADER_PWRON_LO - SHADER_READY_LO == 0x40 && SHADER_PWRACTIVE_LO - SHADER_PWRTRANS_LO == 0x40);

// Coherency: read only on GPUs with HW_FEATURE_COHERENCY_REG (else ACE-Lite is assumed).
inline constexpr uint32_t GPU_COHERENCY_FEATURES = 0x300;
inline constexpr uint32_t COHERENCY_ACE_LITE = BIT(0);
inline constexpr uint32_t COHERENCY_ACE = BIT(1);
inline constexpr uint32_t GPU_THREAD_TLS_ALLOC = 0x310;

// Core stacks (Bifrost and later): only STACK_PRESENT is read.
inline constexpr uint32_t GPU_STACK_PRESENT_LO = 0xE00;
inline constexpr uint32_t GPU_STACK_PRESENT_HI = 0xE04;
inline constexpr uint32_t STACK_READY_LO = 0xE10;
inline constexpr uint32_t STACK_READY_HI = 0xE14;
inline constexpr uint32_t STACK_PWRON_LO = 0xE20;
inline constexpr uint32_t STACK_PWRON_HI = 0xE24;
inline constexpr uint32_t STACK_PWROFF_LO = 0xE30;
inline constexpr uint32_t STACK_PWROFF_HI = 0xE34;
inline constexpr uint32_t STACK_PWRTRANS_LO = 0xE40;
inline constexpr uint32_t STACK_PWRTRANS_HI = 0xE44;

// Implementation-specific configuration (panfrost_gpu_init_quirks writes them on every power-on).
inline constexpr uint32_t GPU_JM_CONFIG = 0xF00;
inline constexpr uint32_t GPU_SHADER_CONFIG = 0xF04;
inline constexpr uint32_t GPU_TILER_CONFIG = 0xF08;
inline constexpr uint32_t GPU_L2_MMU_CONFIG = 0xF0C;

// SHADER_CONFIG bits. Two names share BIT(16): the meaning depends on the GPU generation.
inline constexpr uint32_t SC_ALT_COUNTERS = BIT(3);
inline constexpr uint32_t SC_OVERRIDE_FWD_PIXEL_KILL = BIT(4);
inline constexpr uint32_t SC_SDC_DISABLE_OQ_DISCARD = BIT(6);
inline constexpr uint32_t SC_LS_ALLOW_ATTR_TYPES = BIT(16);
inline constexpr uint32_t SC_LS_PAUSEBUFFER_DISABLE = BIT(16);
inline constexpr uint32_t SC_TLS_HASH_ENABLE = BIT(17);
inline constexpr uint32_t SC_LS_ATTR_CHECK_DISABLE = BIT(18);
inline constexpr uint32_t SC_ENABLE_TEXGRD_FLAGS = BIT(25);
inline constexpr uint32_t SC_VAR_ALGORITHM = BIT(29);

// TILER_CONFIG bits.
inline constexpr uint32_t TC_CLOCK_GATE_OVERRIDE = BIT(0);

// JM_CONFIG bits and fields.
inline constexpr uint32_t JM_TIMESTAMP_OVERRIDE = BIT(0);
inline constexpr uint32_t JM_CLOCK_GATE_OVERRIDE = BIT(1);
inline constexpr uint32_t JM_JOB_THROTTLE_ENABLE = BIT(2);
inline constexpr uint32_t JM_JOB_THROTTLE_LIMIT_SHIFT = 3;
inline constexpr uint32_t JM_MAX_JOB_THROTTLE_LIMIT = 0x3F;
inline constexpr uint32_t JM_FORCE_COHERENCY_FEATURES_SHIFT = 2;
inline constexpr uint32_t JM_IDVS_GROUP_SIZE_SHIFT = 16;
inline constexpr uint32_t JM_DEFAULT_IDVS_GROUP_SIZE = 0xF;
inline constexpr uint32_t JM_MAX_IDVS_GROUP_SIZE = 0x3F;
// The values panfrost writes for the reference parts (docs/hw/jm/gpu-control.md, quirks).
static_assert((JM_DEFAULT_IDVS_GROUP_SIZE << JM_IDVS_GROUP_SIZE_SHIFT) == 0x000F0000);    // G52, G57
static_assert((JM_MAX_JOB_THROTTLE_LIMIT << JM_JOB_THROTTLE_LIMIT_SHIFT) == 0x000001F8);  // T860 r2

// L2_MMU_CONFIG fields (defined; panfrost never writes the register).
inline constexpr uint32_t L2_MMU_CONFIG_ALLOW_SNOOP_DISPARITY = BIT(23);
inline constexpr uint32_t L2_MMU_CONFIG_LIMIT_EXTERNAL_READS_SHIFT = 24;
inline constexpr uint32_t L2_MMU_CONFIG_LIMIT_EXTERNAL_READS = 3u << 24;
inline constexpr uint32_t L2_MMU_CONFIG_LIMIT_EXTERNAL_WRITES_SHIFT = 26;
inline constexpr uint32_t L2_MMU_CONFIG_LIMIT_EXTERNAL_WRITES = 3u << 26;
inline constexpr uint32_t L2_MMU_CONFIG_3BIT_LIMIT_EXTERNAL_READS_SHIFT = 12;
inline constexpr uint32_t L2_MMU_CONFIG_3BIT_LIMIT_EXTERNAL_WRITES_SHIFT = 15;

}  // namespace panfrost
