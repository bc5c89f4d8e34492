// Identity facts of Job Manager GPUs: GPU_ID values, the feature and issue bit numbers panfrost
// uses (enum panfrost_hw_feature / panfrost_hw_issue of panfrost_features.h, panfrost_issues.h),
// and the feature/issue sets and register values of the reference parts (Mali-G52 r1, Mali-G57,
// Mali-T860 r2p0). How a driver matches an id to a model and what it does about each issue is
// driver behaviour and stays out of the contract. Facts and sources: docs/hw/jm/gpu-control.md.
#pragma once
#include <cstdint>

namespace panfrost {

enum panfrost_hw_feature : uint32_t {
    HW_FEATURE_JOBCHAIN_DISAMBIGUATION = 0,
    HW_FEATURE_PWRON_DURING_PWROFF_TRANS = 1,
    HW_FEATURE_XAFFINITY = 2,
    HW_FEATURE_V4 = 3,
    HW_FEATURE_FLUSH_REDUCTION = 4,
    HW_FEATURE_PROTECTED_MODE = 5,
    HW_FEATURE_COHERENCY_REG = 6,
    HW_FEATURE_PROTECTED_DEBUG_MODE = 7,
    HW_FEATURE_AARCH64_MMU = 8,
    HW_FEATURE_TLS_HASHING = 9,
    HW_FEATURE_THREAD_GROUP_SPLIT = 10,
    HW_FEATURE_IDVS_GROUP_SIZE = 11,
    HW_FEATURE_CLEAN_ONLY_SAFE = 12,
    HW_FEATURE_3BIT_EXT_RW_L2_MMU_CONFIG = 13,
    HW_FEATURES_END,
};

enum panfrost_hw_issue : uint32_t {
    HW_ISSUE_6367 = 0,
    HW_ISSUE_6787 = 1,
    HW_ISSUE_8186 = 2,
    HW_ISSUE_8245 = 3,
    HW_ISSUE_8316 = 4,
    HW_ISSUE_8394 = 5,
    HW_ISSUE_8401 = 6,
    HW_ISSUE_8408 = 7,
    HW_ISSUE_8443 = 8,
    HW_ISSUE_8987 = 9,
    HW_ISSUE_9435 = 10,
    HW_ISSUE_9510 = 11,
    HW_ISSUE_9630 = 12,
    HW_ISSUE_10327 = 13,
    HW_ISSUE_10649 = 14,
    HW_ISSUE_10676 = 15,
    HW_ISSUE_10797 = 16,
    HW_ISSUE_10817 = 17,
    HW_ISSUE_10883 = 18,
    HW_ISSUE_10959 = 19,
    HW_ISSUE_10969 = 20,
    HW_ISSUE_11020 = 21,
    HW_ISSUE_11024 = 22,
    HW_ISSUE_11035 = 23,
    HW_ISSUE_11056 = 24,
    HW_ISSUE_T76X_3542 = 25,
    HW_ISSUE_T76X_3953 = 26,
    HW_ISSUE_TMIX_8463 = 27,
    GPUCORE_1619 = 28,
    HW_ISSUE_TMIX_8438 = 29,
    HW_ISSUE_TGOX_R1_1234 = 30,
    HW_ISSUE_TTRX_2968_TTRX_3162 = 31,
    HW_ISSUE_TTRX_3076 = 32,
    HW_ISSUE_TTRX_3485 = 33,
    HW_ISSUE_END,
};

constexpr uint64_t feature_bit(panfrost_hw_feature f) {
    return uint64_t{1} << f;
}
constexpr uint64_t issue_bit(panfrost_hw_issue i) {
    return uint64_t{1} << i;
}
// Applied to every GPU.
inline constexpr uint64_t kHwIssuesAll = issue_bit(HW_ISSUE_9435);

// A model entry: the product id panfrost compares (GPU_ID >> 16, masked with 0xF00F when any of
// bits [15:12] is set) and the model's own feature and issue sets (kHwIssuesAll not included).
struct ModelFacts {
    const char* name;
    uint32_t product_id;
    uint64_t features;
    uint64_t issues;
};

inline constexpr ModelFacts kModelT860 = {
    "t860", 0x0860,
    feature_bit(HW_FEATURE_JOBCHAIN_DISAMBIGUATION) | feature_bit(HW_FEATURE_PWRON_DURING_PWROFF_TRANS) |
        feature_bit(HW_FEATURE_XAFFINITY) | feature_bit(HW_FEATURE_THREAD_GROUP_SPLIT),
    issue_bit(HW_ISSUE_10883) | issue_bit(HW_ISSUE_T76X_3953) | issue_bit(HW_ISSUE_TMIX_8438)};
inline constexpr ModelFacts kModelG52 = {
    "g52", 0x7002,
    feature_bit(HW_FEATURE_JOBCHAIN_DISAMBIGUATION) | feature_bit(HW_FEATURE_PWRON_DURING_PWROFF_TRANS) |
        feature_bit(HW_FEATURE_XAFFINITY) | feature_bit(HW_FEATURE_THREAD_GROUP_SPLIT) |
        feature_bit(HW_FEATURE_FLUSH_REDUCTION) | feature_bit(HW_FEATURE_PROTECTED_MODE) |
        feature_bit(HW_FEATURE_PROTECTED_DEBUG_MODE) | feature_bit(HW_FEATURE_IDVS_GROUP_SIZE) |
        feature_bit(HW_FEATURE_COHERENCY_REG),
    0};
inline constexpr ModelFacts kModelG57 = {
    "g57", 0x9001,
    feature_bit(HW_FEATURE_JOBCHAIN_DISAMBIGUATION) | feature_bit(HW_FEATURE_PWRON_DURING_PWROFF_TRANS) |
        feature_bit(HW_FEATURE_XAFFINITY) | feature_bit(HW_FEATURE_FLUSH_REDUCTION) |
        feature_bit(HW_FEATURE_PROTECTED_MODE) | feature_bit(HW_FEATURE_PROTECTED_DEBUG_MODE) |
        feature_bit(HW_FEATURE_COHERENCY_REG) | feature_bit(HW_FEATURE_AARCH64_MMU) |
        feature_bit(HW_FEATURE_IDVS_GROUP_SIZE) | feature_bit(HW_FEATURE_CLEAN_ONLY_SAFE),
    issue_bit(HW_ISSUE_TTRX_2968_TTRX_3162) | issue_bit(HW_ISSUE_TTRX_3076)};
// G57 r0p0 has TTRX_3485 on top of the model's issues.
inline constexpr uint64_t kG57R0p0ExtraIssues = issue_bit(HW_ISSUE_TTRX_3485);
// The bitmaps panfrost prints at probe for these parts (model issues | kHwIssuesAll).
static_assert(kModelT860.features == 0x407 && (kModelT860.issues | kHwIssuesAll) == 0x24040400);
static_assert(kModelG52.features == 0xCF7 && (kModelG52.issues | kHwIssuesAll) == 0x400);
static_assert(kModelG57.features == 0x19F7 && (kModelG57.issues | kHwIssuesAll) == 0x180000400ull);
static_assert((kModelG57.issues | kHwIssuesAll | kG57R0p0ExtraIssues) == 0x380000400ull);

// Revision entries: major << 12 | minor << 4 | status (the low 16 bits of GPU_ID).
constexpr uint32_t gpu_revision(uint32_t major, uint32_t minor, uint32_t status = 0) {
    return (major << 12) | (minor << 4) | status;
}

// The identity registers of a reference part, as the kernel printed them on real boards. Values
// no public log shows are the mock's choice and are marked so.
struct IdentityRegs {
    uint32_t gpu_id;
    uint32_t l2_features;
    uint32_t core_features;
    uint32_t tiler_features;
    uint32_t mem_features;
    uint32_t mmu_features;
    uint32_t as_present;
    uint32_t js_present;
    uint64_t shader_present;
    uint64_t tiler_present;  // not printed at probe: 1 assumed
    uint64_t l2_present;
    uint32_t mesa_arch;  // Mesa's architecture number (job descriptor version)
};

// Mali-G52 r1 (RK3566/RK3568): the mock's default part.
inline constexpr IdentityRegs kG52R1 = {0x74021000, 0x07110206, 0x2, 0x209, 0x1, 0x2823, 0xFF, 0x7, 0x1, 0x1, 0x1, 7};
// Mali-G57 r0p1 (Allwinner A523).
inline constexpr IdentityRegs kG57R0p1 = {0x90910010, 0x07110206, 0x0, 0x809, 0x1, 0x2830, 0xFF, 0x7, 0x1, 0x1, 0x1, 9};
// Mali-T860 r2p0 (RK3399).
inline constexpr IdentityRegs kT860R2p0 = {0x08602000, 0x07120206, 0x0, 0x809, 0x1, 0x2830,
                                           0xFF,       0x7,        0xF, 0x1,   0x1, 5};

// The ids decode to the model entries above (GPU_ID >> 16; Bifrost+ masked with 0xF00F).
static_assert(((kG52R1.gpu_id >> 16) & 0xF00F) == kModelG52.product_id &&
              (kG52R1.gpu_id & 0xFFFF) == gpu_revision(1, 0));
static_assert(((kG57R0p1.gpu_id >> 16) & 0xF00F) == kModelG57.product_id &&
              (kG57R0p1.gpu_id & 0xFFFF) == gpu_revision(0, 1));
static_assert((kT860R2p0.gpu_id >> 16) == kModelT860.product_id && (kT860R2p0.gpu_id & 0xFFFF) == gpu_revision(2, 0));
// MMU_FEATURES: G52 35-bit VA, the others 48-bit; 40-bit PA everywhere.
static_assert((kG52R1.mmu_features & 0xFF) == 35 && (kG57R0p1.mmu_features & 0xFF) == 48 &&
              (kG52R1.mmu_features >> 8) == 40);

}  // namespace panfrost
