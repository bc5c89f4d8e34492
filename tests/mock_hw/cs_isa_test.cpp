// hw/csf/cs_isa.h: the literal encodings of panthor's per-job sequence (docs/hw/csf/cs-isa.md)
// and decode round trips.
#include <gtest/gtest.h>

#include "hw/csf/cs_isa.h"

namespace panthor::cs {
namespace {

TEST(CsIsa, PanthorJobSequenceEncodings) {
    EXPECT_EQ(move32(0x5E, 0x1234), 0x025E000000001234ull);
    EXPECT_EQ(flush_cache2(FLUSH_CLEAN_INVALIDATE, FLUSH_CLEAN_INVALIDATE, OTHER_FLUSH_INVALIDATE, 0x5E, 0, 0),
              0x24005E0000000233ull);
    EXPECT_EQ(move48(0x5C, 0xABCDEF012345ull), 0x015CABCDEF012345ull);
    EXPECT_EQ(store_state(0x5C, STATE_CYCLE_COUNT), 0x28005C0100000000ull);
    EXPECT_EQ(store_state(0x5E, STATE_TIMESTAMP), 0x28005E0000000000ull);
    EXPECT_EQ(wait(0x1), 0x0300000000010000ull);
    EXPECT_EQ(call(0x5C, 0x5E), 0x20005C5E00000000ull);
    EXPECT_EQ(move48(0x5E, 1), 0x015E000000000001ull);
    EXPECT_EQ(wait(0xFF), 0x0300000000FF0000ull);
    EXPECT_EQ(sync_add64(0x5C, 0x5E, SCOPE_SYSTEM, true, 0, 0), 0x33005C5E00000001ull);
    EXPECT_EQ(error_barrier(), 0x2F00000000000000ull);
}

TEST(CsIsa, DecodeRoundTrips) {
    Instr i = decode(sync_wait64(10, 20, GREATER, true));
    EXPECT_EQ(i.opcode, SYNC_WAIT64);
    EXPECT_EQ(i.addr, 10);
    EXPECT_EQ(i.data, 20);
    EXPECT_EQ(i.cond, GREATER);
    EXPECT_TRUE(i.error_reject);
    i = decode(branch(LESS, 7, -3));
    EXPECT_EQ(i.offset, -3);
    EXPECT_EQ(i.cond, LESS);
    EXPECT_EQ(i.src, 7);
    i = decode(add_imm32(1, 2, -5));
    EXPECT_EQ(i.simm, -5);
    EXPECT_EQ(i.dst, 1);
    EXPECT_EQ(i.src, 2);
    i = decode(load_multiple(4, 10, 0x8001, -16));
    EXPECT_EQ(i.base, 4);
    EXPECT_EQ(i.addr, 10);
    EXPECT_EQ(i.mask, 0x8001);
    EXPECT_EQ(i.offset, -16);
    i = decode(flush_cache2(FLUSH_CLEAN, FLUSH_NONE, OTHER_FLUSH_INVALIDATE, 9, 0x3, 2));
    EXPECT_EQ(i.l2, FLUSH_CLEAN);
    EXPECT_EQ(i.other, OTHER_FLUSH_INVALIDATE);
    EXPECT_EQ(i.flush_id, 9);
    EXPECT_EQ(i.wait_mask, 0x3);
    EXPECT_EQ(i.signal_slot, 2);
    i = decode(heap_operation(HEAP_FRAG_END, 0x10, 3));
    EXPECT_EQ(i.heap_op, HEAP_FRAG_END);
    i = decode(run_compute(5, AXIS_Z, true, 1, 2, 3, 0));
    EXPECT_EQ(i.task_increment, 5);
    EXPECT_EQ(i.task_axis, AXIS_Z);
    EXPECT_EQ(i.spd, 2);
    EXPECT_EQ(i.tsd, 3);
    EXPECT_TRUE(i.progress_inc);
    EXPECT_FALSE(decode(0x0A00000000000000ull).valid);
    EXPECT_TRUE(decode(nop()).valid);
    for (unsigned op = 0; op < 64; op++)
        EXPECT_EQ(is_valid_opcode(op), std::string(opcode_name(op)) != "INVALID") << op;
}

}  // namespace
}  // namespace panthor::cs
