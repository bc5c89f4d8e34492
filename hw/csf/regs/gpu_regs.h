// GPU_CONTROL block registers: mirrors the GPU part of drivers/gpu/drm/panthor/panthor_regs.h
// (and the newer panthor_gpu_regs.h). Definitions only; shared by the driver and mock_hw.
// 64-bit registers are a LO word at the listed offset and a HI word at +4 (X, X_LO, X_HI).
#pragma once
#include <cstdint>

#include "hw/bits.h"

namespace panthor {

inline constexpr uint32_t GPU_CONTROL_BASE = 0x0;
inline constexpr uint32_t GPU_CONTROL_SIZE = 0x1000;

inline constexpr uint32_t GPU_ID = 0x0;
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

inline constexpr uint32_t GPU_L2_FEATURES = 0x4;
constexpr uint32_t GPU_L2_FEATURES_LINE_SIZE(uint32_t x) {
    return 1u << (x & GENMASK(7, 0));
}
inline constexpr uint32_t GPU_CORE_FEATURES = 0x8;
inline constexpr uint32_t GPU_TILER_FEATURES = 0xC;
inline constexpr uint32_t GPU_MEM_FEATURES = 0x10;
inline constexpr uint32_t GROUPS_L2_COHERENT = BIT(0);
inline constexpr uint32_t GPU_MMU_FEATURES = 0x14;
constexpr uint32_t GPU_MMU_FEATURES_VA_BITS(uint32_t x) {
    return x & GENMASK(7, 0);
}
constexpr uint32_t GPU_MMU_FEATURES_PA_BITS(uint32_t x) {
    return (x >> 8) & GENMASK(7, 0);
}
inline constexpr uint32_t GPU_AS_PRESENT = 0x18;
inline constexpr uint32_t GPU_CSF_ID = 0x1C;

inline constexpr uint32_t GPU_INT_BASE = 0x20;
inline constexpr uint32_t GPU_INT_RAWSTAT = 0x20;
inline constexpr uint32_t GPU_INT_CLEAR = 0x24;
inline constexpr uint32_t GPU_INT_MASK = 0x28;
inline constexpr uint32_t GPU_INT_STAT = 0x2C;
inline constexpr uint32_t GPU_IRQ_FAULT = BIT(0);
inline constexpr uint32_t GPU_IRQ_PROTM_FAULT = BIT(1);
inline constexpr uint32_t GPU_IRQ_RESET_COMPLETED = BIT(8);
inline constexpr uint32_t GPU_IRQ_POWER_CHANGED = BIT(9);
inline constexpr uint32_t GPU_IRQ_POWER_CHANGED_ALL = BIT(10);
inline constexpr uint32_t GPU_IRQ_CLEAN_CACHES_COMPLETED = BIT(17);
inline constexpr uint32_t GPU_IRQ_DOORBELL_MIRROR = BIT(18);
inline constexpr uint32_t GPU_IRQ_MCU_STATUS_CHANGED = BIT(19);

inline constexpr uint32_t GPU_CMD = 0x30;
constexpr uint32_t GPU_CMD_DEF(uint32_t type, uint32_t payload) {
    return type | (payload << 8);
}
inline constexpr uint32_t GPU_CMD_TYPE_MASK = GENMASK(7, 0);
inline constexpr uint32_t CMD_NOP = 0x0;
inline constexpr uint32_t CMD_RESET = 0x1;
inline constexpr uint32_t CMD_PRFCNT = 0x2;
inline constexpr uint32_t CMD_TIME = 0x3;
inline constexpr uint32_t CMD_FLUSH_CACHES = 0x4;
inline constexpr uint32_t CMD_SET_PROTECTED_MODE = 0x5;
inline constexpr uint32_t CMD_FINISH_HALT = 0x6;
inline constexpr uint32_t CMD_CLEAR_FAULT = 0x7;
inline constexpr uint32_t RESET_FAST = 0;
inline constexpr uint32_t RESET_SOFT = 1;
inline constexpr uint32_t RESET_HARD = 2;
inline constexpr uint32_t GPU_FAST_RESET = GPU_CMD_DEF(CMD_RESET, RESET_FAST);
inline constexpr uint32_t GPU_SOFT_RESET = GPU_CMD_DEF(CMD_RESET, RESET_SOFT);
inline constexpr uint32_t GPU_HARD_RESET = GPU_CMD_DEF(CMD_RESET, RESET_HARD);
inline constexpr uint32_t GPU_START_CYCLE_COUNTING = GPU_CMD_DEF(CMD_TIME, 1);
inline constexpr uint32_t GPU_STOP_CYCLE_COUNTING = GPU_CMD_DEF(CMD_TIME, 0);
inline constexpr uint32_t GPU_CLEAR_FAULT = GPU_CMD_DEF(CMD_CLEAR_FAULT, 0);
// Per-cache flush modes (each field: BIT(0) clean, BIT(1) invalidate).
inline constexpr uint32_t CACHE_CLEAN = BIT(0);
inline constexpr uint32_t CACHE_INV = BIT(1);
constexpr uint32_t GPU_FLUSH_CACHES(uint32_t l2, uint32_t lsc, uint32_t oth) {
    return GPU_CMD_DEF(CMD_FLUSH_CACHES, (l2 & 0xF) | ((lsc & 0xF) << 4) | ((oth & 0xF) << 8));
}
constexpr uint32_t GPU_FLUSH_L2_MODE(uint32_t cmd) {
    return (cmd >> 8) & 0xF;
}
constexpr uint32_t GPU_FLUSH_LSC_MODE(uint32_t cmd) {
    return (cmd >> 12) & 0xF;
}
constexpr uint32_t GPU_FLUSH_OTHER_MODE(uint32_t cmd) {
    return (cmd >> 16) & 0xF;
}

inline constexpr uint32_t GPU_STATUS = 0x34;
inline constexpr uint32_t GPU_STATUS_ACTIVE = BIT(0);
inline constexpr uint32_t GPU_STATUS_PWR_ACTIVE = BIT(1);
inline constexpr uint32_t GPU_STATUS_PAGE_FAULT = BIT(4);
inline constexpr uint32_t GPU_STATUS_PROTM_ACTIVE = BIT(7);
inline constexpr uint32_t GPU_STATUS_DBG_ENABLED = BIT(8);

inline constexpr uint32_t GPU_FAULT_STATUS = 0x3C;
inline constexpr uint32_t GPU_FAULT_STATUS_EXCEPTION_TYPE_MASK = GENMASK(7, 0);
inline constexpr uint32_t GPU_FAULT_STATUS_ACCESS_TYPE_SHIFT = 8;    // (KB)
inline constexpr uint32_t GPU_FAULT_STATUS_ADDRESS_VALID = BIT(10);  // (KB)
inline constexpr uint32_t GPU_FAULT_STATUS_JASID_VALID = BIT(11);    // (KB)
constexpr uint32_t GPU_FAULT_STATUS_JASID(uint32_t as) {
    return (as & 0xF) << 12;
}  // (KB)
inline constexpr uint32_t GPU_FAULT_ADDR = 0x40;
inline constexpr uint32_t GPU_FAULT_ADDR_LO = 0x40;
inline constexpr uint32_t GPU_FAULT_ADDR_HI = 0x44;

inline constexpr uint32_t GPU_L2_CONFIG = 0x48;
inline constexpr uint32_t GPU_L2_CONFIG_ASN_HASH_ENABLE = BIT(24);

inline constexpr uint32_t GPU_PWR_KEY = 0x50;
inline constexpr uint32_t GPU_PWR_KEY_UNLOCK = 0x2968A819;
inline constexpr uint32_t GPU_PWR_OVERRIDE0 = 0x54;
inline constexpr uint32_t GPU_PWR_OVERRIDE1 = 0x58;

inline constexpr uint32_t GPU_FEATURES = 0x60;
inline constexpr uint32_t GPU_FEATURES_LO = 0x60;
inline constexpr uint32_t GPU_FEATURES_HI = 0x64;

inline constexpr uint32_t GPU_TIMESTAMP_OFFSET = 0x88;
inline constexpr uint32_t GPU_TIMESTAMP_OFFSET_LO = 0x88;
inline constexpr uint32_t GPU_TIMESTAMP_OFFSET_HI = 0x8C;
inline constexpr uint32_t GPU_CYCLE_COUNT = 0x90;
inline constexpr uint32_t GPU_CYCLE_COUNT_LO = 0x90;
inline constexpr uint32_t GPU_CYCLE_COUNT_HI = 0x94;
inline constexpr uint32_t GPU_TIMESTAMP = 0x98;
inline constexpr uint32_t GPU_TIMESTAMP_LO = 0x98;
inline constexpr uint32_t GPU_TIMESTAMP_HI = 0x9C;

inline constexpr uint32_t GPU_THREAD_MAX_THREADS = 0xA0;
inline constexpr uint32_t GPU_THREAD_MAX_WORKGROUP_SIZE = 0xA4;
inline constexpr uint32_t GPU_THREAD_MAX_BARRIER_SIZE = 0xA8;
inline constexpr uint32_t GPU_THREAD_FEATURES = 0xAC;
constexpr uint32_t GPU_TEXTURE_FEATURES(uint32_t n) {
    return 0xB0 + n * 4;
}

inline constexpr uint32_t GPU_SHADER_PRESENT = 0x100;
inline constexpr uint32_t GPU_SHADER_PRESENT_LO = 0x100;
inline constexpr uint32_t GPU_SHADER_PRESENT_HI = 0x104;
inline constexpr uint32_t GPU_TILER_PRESENT = 0x110;
inline constexpr uint32_t GPU_TILER_PRESENT_LO = 0x110;
inline constexpr uint32_t GPU_TILER_PRESENT_HI = 0x114;
inline constexpr uint32_t GPU_L2_PRESENT = 0x120;
inline constexpr uint32_t GPU_L2_PRESENT_LO = 0x120;
inline constexpr uint32_t GPU_L2_PRESENT_HI = 0x124;

// Power domains: each register is 64-bit; the domain's base + {READY 0x140.., PWRON 0x180..,
// PWROFF 0x1C0.., PWRTRANS 0x200.., PWRACTIVE 0x240..}, SHADER +0, TILER +0x10, L2 +0x20.
inline constexpr uint32_t SHADER_READY = 0x140;
inline constexpr uint32_t TILER_READY = 0x150;
inline constexpr uint32_t L2_READY = 0x160;
inline constexpr uint32_t SHADER_PWRON = 0x180;
inline constexpr uint32_t TILER_PWRON = 0x190;
inline constexpr uint32_t L2_PWRON = 0x1A0;
inline constexpr uint32_t SHADER_PWROFF = 0x1C0;
inline constexpr uint32_t TILER_PWROFF = 0x1D0;
inline constexpr uint32_t L2_PWROFF = 0x1E0;
inline constexpr uint32_t SHADER_PWRTRANS = 0x200;
inline constexpr uint32_t TILER_PWRTRANS = 0x210;
inline constexpr uint32_t L2_PWRTRANS = 0x220;
inline constexpr uint32_t SHADER_PWRACTIVE = 0x240;
inline constexpr uint32_t TILER_PWRACTIVE = 0x250;
inline constexpr uint32_t L2_PWRACTIVE = 0x260;
// Offsets of a power domain's registers from its SHADER_* counterpart.
inline constexpr uint32_t PWR_DOMAIN_SHADER = 0x0;
inline constexpr uint32_t PWR_DOMAIN_TILER = 0x10;
inline constexpr uint32_t PWR_DOMAIN_L2 = 0x20;

inline constexpr uint32_t GPU_REVID = 0x280;
constexpr uint32_t GPU_ASN_HASH(uint32_t n) {
    return 0x2C0 + n * 4;
}

inline constexpr uint32_t GPU_COHERENCY_FEATURES = 0x300;
constexpr uint32_t GPU_COHERENCY_PROT_BIT(uint32_t p) {
    return BIT(p);
}
inline constexpr uint32_t GPU_COHERENCY_PROTOCOL = 0x304;
inline constexpr uint32_t GPU_COHERENCY_ACE_LITE = 0;
inline constexpr uint32_t GPU_COHERENCY_ACE = 1;
inline constexpr uint32_t GPU_COHERENCY_NONE = 31;

inline constexpr uint32_t MCU_CONTROL = 0x700;
inline constexpr uint32_t MCU_CONTROL_DISABLE = 0;
inline constexpr uint32_t MCU_CONTROL_ENABLE = 1;
inline constexpr uint32_t MCU_CONTROL_AUTO = 2;
inline constexpr uint32_t MCU_STATUS = 0x704;
inline constexpr uint32_t MCU_STATUS_DISABLED = 0;
inline constexpr uint32_t MCU_STATUS_ENABLED = 1;
inline constexpr uint32_t MCU_STATUS_HALT = 2;
inline constexpr uint32_t MCU_STATUS_FATAL = 3;

}  // namespace panthor
