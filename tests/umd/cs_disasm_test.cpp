// Tests of umd/cs_disasm: every v10 opcode's line built from the ISA encoders (so each operand is
// read from the field the encoder wrote), the branch target, the modifiers' spellings, unknown
// opcodes shown as such, and the full listing's addresses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hw/csf/cs_isa.h"
#include "umd/cs_disasm.h"

namespace umd::cs {
namespace {

namespace isa = panthor::cs;

struct Case {
    const char* name;
    uint64_t raw;
    const char* text;
    uint64_t va = 0x1000;
};

class CsDisasmInstr : public ::testing::TestWithParam<Case> {};

TEST_P(CsDisasmInstr, Formats) {
    const Case& c = GetParam();
    EXPECT_EQ(disasm_instr(c.raw, c.va), c.text);
}

const Case kCases[] = {
    {"Nop", isa::nop(), "NOP"},
    {"NopWithPayload", 0x0000000000001234, "NOP #0x00000000001234"},
    {"Move48", isa::move48(12, 0xABCDEF012345), "MOVE d12, #0xabcdef012345"},
    {"Move32", isa::move32(7, 0xDEADBEEF), "MOVE32 r7, #0xdeadbeef"},
    {"Wait", isa::wait(0x81), "WAIT wait=0x81"},
    {"WaitProgress", isa::wait(0x1, true), "WAIT.progress wait=0x1"},
    {"RunCompute", isa::run_compute(5, isa::AXIS_Y, false, 1, 2, 3, 0),
     "RUN_COMPUTE task_inc=5 axis=Y srt=1 spd=2 tsd=3 fau=0"},
    {"RunComputeProgress", isa::run_compute(1, isa::AXIS_Z, true),
     "RUN_COMPUTE.progress task_inc=1 axis=Z srt=0 spd=0 tsd=0 fau=0"},
    {"RunTiling", isa::run_tiling(0x55, true, 0, 1, 0, 3), "RUN_TILING.progress flags=0x55 srt=0 spd=1 tsd=0 fau=3"},
    {"RunIdvs", isa::run_idvs(0x7, false, true, true, 33, 0x11),
     "RUN_IDVS.malloc flags=0x7 draw_id=r33 vary_srt=1 vary_fau=0 vary_tsd=0 frag_srt=0 frag_tsd=1"},
    {"RunFragment", isa::run_fragment(true, 1, true), "RUN_FRAGMENT.progress.tem order=horizontal"},
    {"RunFragmentOddOrder", isa::run_fragment(false, 9), "RUN_FRAGMENT order=9"},
    {"RunFullscreen", isa::run_fullscreen(0x3, 20), "RUN_FULLSCREEN flags=0x3 dcd=d20"},
    {"FinishTiling", isa::finish_tiling(true), "FINISH_TILING.progress"},
    {"FinishFragment", isa::finish_fragment(true, 0x3, 40, 42, 2),
     "FINISH_FRAGMENT.frag_end last=d40 first=d42 wait=0x3 signal=sb2"},
    {"AddImm32", isa::add_imm32(3, 4, -5), "ADD_IMMEDIATE32 r3, r4, #-5"},
    {"AddImm64", isa::add_imm64(6, 8, 0x100), "ADD_IMMEDIATE64 d6, d8, #256"},
    {"Umin32", isa::umin32(1, 2, 3), "UMIN32 r1, r2, r3"},
    {"LoadMultiple", isa::load_multiple(4, 10, 0x3, 8), "LOAD_MULTIPLE r4, [d10 + 8], mask=0x0003"},
    {"StoreMultipleNegative", isa::store_multiple(0, 2, 0xF00F, -16), "STORE_MULTIPLE r0, [d2 - 16], mask=0xf00f"},
    {"StoreMultipleNoOffset", isa::store_multiple(0, 2, 0x1), "STORE_MULTIPLE r0, [d2], mask=0x0001"},
    // Target = address of the next instruction + 8 * offset.
    {"BranchForward", isa::branch(isa::NEQUAL, 5, 3), "BRANCH.ne r5, #+3 -> 0x1020"},
    {"BranchBackward", isa::branch(isa::LESS, 9, -2), "BRANCH.lt r9, #-2 -> 0xff8"},
    {"BranchAlways", isa::branch(isa::ALWAYS, 0, 0), "BRANCH.always r0, #+0 -> 0x1008"},
    {"SetSbEntry", isa::set_sb_entry(2, 5), "SET_SB_ENTRY endpoint=sb2 other=sb5"},
    {"ProgressWait", isa::progress_wait(14, 3), "PROGRESS_WAIT d14, queue=3"},
    {"SetExceptionHandler", isa::set_exception_handler(isa::EXCEPTION_TILER_OOM, 60, 62),
     "SET_EXCEPTION_HANDLER.tiler_oom d60, r62"},
    {"SetExceptionHandlerOther", isa::set_exception_handler(7, 60, 62), "SET_EXCEPTION_HANDLER.exception7 d60, r62"},
    {"Call", isa::call(92, 94), "CALL d92, r94"},
    {"Jump", isa::jump(10, 12), "JUMP d10, r12"},
    {"ReqResource", isa::req_resource(true, true, false, true), "REQ_RESOURCE compute|fragment|idvs"},
    {"ReqResourceNone", isa::req_resource(false, false, false, false), "REQ_RESOURCE none"},
    {"FlushCache2",
     isa::flush_cache2(isa::FLUSH_CLEAN_INVALIDATE, isa::FLUSH_CLEAN, isa::OTHER_FLUSH_INVALIDATE, 94, 0x2, 1),
     "FLUSH_CACHE2 l2=clean_inv lsc=clean other=inv flush_id=r94 wait=0x2 signal=sb1"},
    {"SyncAdd32Csg", isa::sync_add32(20, 22, isa::SCOPE_CSG, false, 0x4, 3),
     "SYNC_ADD32.csg [d20], r22 wait=0x4 signal=sb3"},
    {"SyncSet32", isa::sync_set32(20, 22), "SYNC_SET32.system.propagate [d20], r22 wait=0x0 signal=sb0"},
    {"SyncAdd64", isa::sync_add64(92, 94), "SYNC_ADD64.system.propagate [d92], d94 wait=0x0 signal=sb0"},
    {"SyncSet64", isa::sync_set64(30, 32, isa::SCOPE_CSG, true, 0xFF, 7),
     "SYNC_SET64.csg.propagate [d30], d32 wait=0xff signal=sb7"},
    {"SyncWait32", isa::sync_wait32(40, 42, isa::GREATER), "SYNC_WAIT32.gt [d40], r42"},
    {"SyncWait64Reject", isa::sync_wait64(40, 42, isa::LEQUAL, true), "SYNC_WAIT64.le.reject [d40], d42"},
    {"StoreState", isa::store_state(92, isa::STATE_CYCLE_COUNT, 8, 0x1, 2),
     "STORE_STATE.cycle_count [d92 + 8] wait=0x1 signal=sb2"},
    {"StoreStateTimestamp", isa::store_state(94, isa::STATE_TIMESTAMP),
     "STORE_STATE.timestamp [d94] wait=0x0 signal=sb0"},
    {"ProtRegion", isa::prot_region(16), "PROT_REGION #16"},
    {"ProgressStore", isa::progress_store(50), "PROGRESS_STORE d50"},
    {"ProgressLoad", isa::progress_load(52), "PROGRESS_LOAD d52"},
    {"RunComputeIndirect", isa::run_compute_indirect(64, true, 1, 0, 0, 0),
     "RUN_COMPUTE_INDIRECT.progress wg_per_task=64 srt=1 spd=0 tsd=0 fau=0"},
    {"ErrorBarrier", isa::error_barrier(), "ERROR_BARRIER"},
    {"HeapSet", isa::heap_set(48), "HEAP_SET d48"},
    {"HeapOperation", isa::heap_operation(isa::HEAP_FRAG_END, 0x1, 4), "HEAP_OPERATION.frag_end wait=0x1 signal=sb4"},
    {"TracePoint", isa::trace_point(10, 4, 0x2, 1), "TRACE_POINT r10, count=4 wait=0x2 signal=sb1"},
    {"UnknownOpcode", 0x0A00000000000123, "UNKNOWN.0x0a #0x00000000000123"},
    {"UnknownHighOpcode", 0xFF12345678901234, "UNKNOWN.0xff #0x12345678901234"},
};

INSTANTIATE_TEST_SUITE_P(AllOpcodes, CsDisasmInstr, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The table above covers every opcode v10 defines, and nothing valid prints as UNKNOWN.
TEST(CsDisasm, TableCoversEveryOpcodeAndOnlyInvalidOnesAreUnknown) {
    std::vector<bool> covered(256);
    for (const Case& c : kCases)
        covered[c.raw >> 56] = true;
    for (unsigned op = 0; op < 256; op++) {
        const uint64_t raw = uint64_t{op} << 56;
        const std::string text = disasm_instr(raw);
        if (isa::is_valid_opcode(static_cast<uint8_t>(op))) {
            EXPECT_TRUE(covered[op]) << "no case for " << isa::opcode_name(static_cast<uint8_t>(op));
            EXPECT_EQ(text.rfind(isa::opcode_name(static_cast<uint8_t>(op)), 0), 0u) << text;
        } else {
            EXPECT_EQ(text.rfind("UNKNOWN.", 0), 0u) << "opcode " << op << ": " << text;
        }
    }
}

TEST(CsDisasm, ListingHasOneLinePerInstructionWithAddressAndRawWord) {
    const std::vector<uint64_t> code = {isa::move48(92, 0x201000), isa::call(92, 94), isa::branch(isa::EQUAL, 1, -2)};
    EXPECT_EQ(disasm(code, 0x40000),
              "0000000000040000: 015c000000201000  MOVE d92, #0x201000\n"
              "0000000000040008: 20005c5e00000000  CALL d92, r94\n"
              "0000000000040010: 160001002000fffe  BRANCH.eq r1, #-2 -> 0x40008\n");
    EXPECT_EQ(disasm({}, 0), "");
}

}  // namespace
}  // namespace umd::cs
