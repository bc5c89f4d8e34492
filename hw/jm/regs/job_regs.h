// JOB_CONTROL of a Job Manager GPU: the job IRQ block and the per-slot JS_* registers, as panfrost
// uses them (drivers/gpu/drm/panfrost/panfrost_regs.h). Definitions only; shared by the driver and
// the mock. Layout, fields and slot semantics: docs/hw/jm/job-control.md.
#pragma once
#include <cstdint>

#include "hw/bits.h"

namespace panfrost {

using panthor::BIT;
using panthor::GENMASK;

inline constexpr uint32_t JOB_CONTROL_BASE = 0x1000;
inline constexpr uint32_t JOB_CONTROL_SIZE = 0x1000;

// Job IRQ: bit n = slot n DONE, bit 16 + n = slot n FAIL (fault, STOPPED or TERMINATED; the
// reason is in JS_STATUS). RAWSTAT bits are levels: they stay set until written to CLEAR.
inline constexpr uint32_t JOB_INT_RAWSTAT = 0x1000;
inline constexpr uint32_t JOB_INT_CLEAR = 0x1004;
inline constexpr uint32_t JOB_INT_MASK = 0x1008;
inline constexpr uint32_t JOB_INT_STAT = 0x100C;
// JS_STATE: bit n = slot n's current job active, bit 16 + n = its NEXT set armed.
inline constexpr uint32_t JOB_INT_JS_STATE = 0x1010;
inline constexpr uint32_t JOB_INT_THROTTLE = 0x1014;

constexpr uint32_t MK_JS_MASK(uint32_t js) {
    return 0x10001u << js;
}
constexpr uint32_t JOB_INT_MASK_DONE(uint32_t js) {
    return BIT(js);
}
constexpr uint32_t JOB_INT_MASK_ERR(uint32_t js) {
    return BIT(js + 16);
}
inline constexpr uint32_t JOB_INT_DONE_BITS = GENMASK(15, 0);
inline constexpr uint32_t JOB_INT_ERR_BITS = GENMASK(31, 16);
static_assert(MK_JS_MASK(2) == (JOB_INT_MASK_DONE(2) | JOB_INT_MASK_ERR(2)));

// Job slots: at most 16 decoded (JS_PRESENT is a 16-bit mask). panfrost sets up three schedulers
// and unmasks slots 0..2; it submits fragment jobs on slot 0 and every other job on slot 1.
inline constexpr uint32_t MAX_JOB_SLOTS = 16;
inline constexpr uint32_t NUM_JOB_SLOTS = 3;
inline constexpr uint32_t JS_BASE = 0x1800;
inline constexpr uint32_t JS_SLOT_STRIDE = 0x80;
// Register offsets inside one slot. The current set is read-only (it describes the running chain);
// the NEXT set (from +0x40) is what software writes and JS_COMMAND_NEXT START arms.
inline constexpr uint32_t JS_HEAD_OFF = 0x00;
inline constexpr uint32_t JS_TAIL_OFF = 0x08;
inline constexpr uint32_t JS_AFFINITY_OFF = 0x10;
inline constexpr uint32_t JS_CONFIG_OFF = 0x18;
inline constexpr uint32_t JS_XAFFINITY_OFF = 0x1C;
inline constexpr uint32_t JS_COMMAND_OFF = 0x20;
inline constexpr uint32_t JS_STATUS_OFF = 0x24;
inline constexpr uint32_t JS_NEXT_OFF = 0x40;  // the NEXT set mirrors HEAD..XAFFINITY, COMMAND
inline constexpr uint32_t JS_HEAD_NEXT_OFF = 0x40;
inline constexpr uint32_t JS_AFFINITY_NEXT_OFF = 0x50;
inline constexpr uint32_t JS_CONFIG_NEXT_OFF = 0x58;
inline constexpr uint32_t JS_XAFFINITY_NEXT_OFF = 0x5C;
inline constexpr uint32_t JS_COMMAND_NEXT_OFF = 0x60;
inline constexpr uint32_t JS_FLUSH_ID_NEXT_OFF = 0x70;
static_assert(JS_HEAD_NEXT_OFF == JS_HEAD_OFF + JS_NEXT_OFF && JS_AFFINITY_NEXT_OFF == JS_AFFINITY_OFF + JS_NEXT_OFF &&
              JS_CONFIG_NEXT_OFF == JS_CONFIG_OFF + JS_NEXT_OFF &&
              JS_XAFFINITY_NEXT_OFF == JS_XAFFINITY_OFF + JS_NEXT_OFF &&
              JS_COMMAND_NEXT_OFF == JS_COMMAND_OFF + JS_NEXT_OFF);
static_assert(JS_FLUSH_ID_NEXT_OFF < JS_SLOT_STRIDE);

constexpr uint32_t JS_SLOT(uint32_t js) {
    return JS_BASE + js * JS_SLOT_STRIDE;
}
constexpr uint32_t JS_HEAD_LO(uint32_t js) {
    return JS_SLOT(js) + 0x00;
}
constexpr uint32_t JS_HEAD_HI(uint32_t js) {
    return JS_SLOT(js) + 0x04;
}
constexpr uint32_t JS_TAIL_LO(uint32_t js) {
    return JS_SLOT(js) + 0x08;
}
constexpr uint32_t JS_TAIL_HI(uint32_t js) {
    return JS_SLOT(js) + 0x0C;
}
constexpr uint32_t JS_AFFINITY_LO(uint32_t js) {
    return JS_SLOT(js) + 0x10;
}
constexpr uint32_t JS_AFFINITY_HI(uint32_t js) {
    return JS_SLOT(js) + 0x14;
}
constexpr uint32_t JS_CONFIG(uint32_t js) {
    return JS_SLOT(js) + 0x18;
}
constexpr uint32_t JS_XAFFINITY(uint32_t js) {
    return JS_SLOT(js) + 0x1C;
}
constexpr uint32_t JS_COMMAND(uint32_t js) {
    return JS_SLOT(js) + 0x20;
}
constexpr uint32_t JS_STATUS(uint32_t js) {
    return JS_SLOT(js) + 0x24;
}
constexpr uint32_t JS_HEAD_NEXT_LO(uint32_t js) {
    return JS_SLOT(js) + 0x40;
}
constexpr uint32_t JS_HEAD_NEXT_HI(uint32_t js) {
    return JS_SLOT(js) + 0x44;
}
constexpr uint32_t JS_AFFINITY_NEXT_LO(uint32_t js) {
    return JS_SLOT(js) + 0x50;
}
constexpr uint32_t JS_AFFINITY_NEXT_HI(uint32_t js) {
    return JS_SLOT(js) + 0x54;
}
constexpr uint32_t JS_CONFIG_NEXT(uint32_t js) {
    return JS_SLOT(js) + 0x58;
}
constexpr uint32_t JS_XAFFINITY_NEXT(uint32_t js) {
    return JS_SLOT(js) + 0x5C;
}
constexpr uint32_t JS_COMMAND_NEXT(uint32_t js) {
    return JS_SLOT(js) + 0x60;
}
constexpr uint32_t JS_FLUSH_ID_NEXT(uint32_t js) {
    return JS_SLOT(js) + 0x70;
}
static_assert(JS_HEAD_LO(0) == 0x1800 && JS_COMMAND(1) == 0x18A0 && JS_COMMAND_NEXT(2) == 0x1960);
static_assert(JS_SLOT(MAX_JOB_SLOTS) == 0x2000, "the slots end where MMU_CONTROL starts");

// JS_CONFIG / JS_CONFIG_NEXT.
inline constexpr uint32_t JS_CONFIG_AS_MASK = GENMASK(3, 0);  // the address space the chain runs in
inline constexpr uint32_t JS_CONFIG_START_FLUSH_SHIFT = 8;    // [9:8]: 1 clean, 3 clean+invalidate
inline constexpr uint32_t JS_CONFIG_START_FLUSH_CLEAN = BIT(8);
inline constexpr uint32_t JS_CONFIG_START_FLUSH_CLEAN_INVALIDATE = 3u << 8;
inline constexpr uint32_t JS_CONFIG_START_MMU = BIT(10);
inline constexpr uint32_t JS_CONFIG_JOB_CHAIN_FLAG = BIT(11);
inline constexpr uint32_t JS_CONFIG_END_FLUSH_SHIFT = 12;  // [13:12]: 1 clean, 3 clean+invalidate
inline constexpr uint32_t JS_CONFIG_END_FLUSH_CLEAN = BIT(12);
inline constexpr uint32_t JS_CONFIG_END_FLUSH_CLEAN_INVALIDATE = 3u << 12;
inline constexpr uint32_t JS_CONFIG_ENABLE_FLUSH_REDUCTION = BIT(14);
// Set: the GPU does not write the job status back into the job headers.
inline constexpr uint32_t JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK = BIT(15);
inline constexpr uint32_t JS_CONFIG_THREAD_PRI_SHIFT = 16;
constexpr uint32_t JS_CONFIG_THREAD_PRI(uint32_t n) {
    return n << JS_CONFIG_THREAD_PRI_SHIFT;
}
constexpr uint32_t JS_CONFIG_AS(uint32_t cfg) {
    return cfg & JS_CONFIG_AS_MASK;
}
constexpr uint32_t JS_CONFIG_START_FLUSH(uint32_t cfg) {
    return (cfg >> JS_CONFIG_START_FLUSH_SHIFT) & 3;
}
constexpr uint32_t JS_CONFIG_END_FLUSH(uint32_t cfg) {
    return (cfg >> JS_CONFIG_END_FLUSH_SHIFT) & 3;
}
constexpr uint32_t JS_CONFIG_CHAIN_FLAG(uint32_t cfg) {
    return (cfg & JS_CONFIG_JOB_CHAIN_FLAG) ? 1 : 0;
}
// panfrost's usual value: clean+invalidate at both ends, medium priority, AS in [3:0].
static_assert((JS_CONFIG_START_FLUSH_CLEAN_INVALIDATE | JS_CONFIG_END_FLUSH_CLEAN_INVALIDATE | JS_CONFIG_THREAD_PRI(8) |
               1u) == 0x00083301);

// JS_XAFFINITY / JS_XAFFINITY_NEXT (defined; panfrost never writes them).
inline constexpr uint32_t JS_XAFFINITY_ENABLE = BIT(0);
inline constexpr uint32_t JS_XAFFINITY_TILER_MASK = GENMASK(15, 8);
inline constexpr uint32_t JS_XAFFINITY_L2_MASK = GENMASK(31, 16);

// JS_COMMAND (current set: the stop commands) and JS_COMMAND_NEXT (NOP, START). The _0/_1 stops
// act only when the running chain's JS_CONFIG_JOB_CHAIN_FLAG is 0/1 and are ignored otherwise.
inline constexpr uint32_t JS_COMMAND_NOP = 0x00;
inline constexpr uint32_t JS_COMMAND_START = 0x01;
inline constexpr uint32_t JS_COMMAND_SOFT_STOP = 0x02;
inline constexpr uint32_t JS_COMMAND_HARD_STOP = 0x03;
inline constexpr uint32_t JS_COMMAND_SOFT_STOP_0 = 0x04;
inline constexpr uint32_t JS_COMMAND_HARD_STOP_0 = 0x05;
inline constexpr uint32_t JS_COMMAND_SOFT_STOP_1 = 0x06;
inline constexpr uint32_t JS_COMMAND_HARD_STOP_1 = 0x07;
// Decoding of the stop commands: hard when bit 0 is set; a conditional variant (4..7) names the
// flag value it requires in bit 1.
constexpr bool JS_COMMAND_IS_STOP(uint32_t cmd) {
    return cmd >= JS_COMMAND_SOFT_STOP && cmd <= JS_COMMAND_HARD_STOP_1;
}
constexpr bool JS_COMMAND_IS_HARD_STOP(uint32_t cmd) {
    return JS_COMMAND_IS_STOP(cmd) && (cmd & 1) != 0;
}
constexpr bool JS_COMMAND_IS_CONDITIONAL(uint32_t cmd) {
    return cmd >= JS_COMMAND_SOFT_STOP_0 && cmd <= JS_COMMAND_HARD_STOP_1;
}
constexpr uint32_t JS_COMMAND_REQUIRED_FLAG(uint32_t cmd) {
    return (cmd >> 1) & 1;
}
static_assert(JS_COMMAND_IS_HARD_STOP(JS_COMMAND_HARD_STOP_1) && !JS_COMMAND_IS_HARD_STOP(JS_COMMAND_SOFT_STOP_0));
static_assert(JS_COMMAND_REQUIRED_FLAG(JS_COMMAND_SOFT_STOP_0) == 0 &&
              JS_COMMAND_REQUIRED_FLAG(JS_COMMAND_HARD_STOP_0) == 0);
static_assert(JS_COMMAND_REQUIRED_FLAG(JS_COMMAND_SOFT_STOP_1) == 1 &&
              JS_COMMAND_REQUIRED_FLAG(JS_COMMAND_HARD_STOP_1) == 1);

// JS_STATUS holds an exception code (hw/jm/regs/exceptions.h): ACTIVE while running, DONE after
// success, STOPPED / TERMINATED / a fault code on FAIL.

}  // namespace panfrost
