// Tests of umd/cs_builder: every emitter's encoding read back with panthor::cs::decode, labels and
// structured control flow executed by a small interpreter of the arithmetic/branch subset (so an
// off-by-one offset shows up as a wrong result, not only as a wrong number), overflow, and the
// register/operand checks.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "hw/csf/cs_isa.h"
#include "umd/cs_builder.h"

namespace umd::cs {
namespace {

namespace isa = panthor::cs;
using isa::Instr;

// ---- a tiny interpreter: MOVE, MOVE32, ADD_IMMEDIATE32/64, UMIN32, BRANCH, NOP ----
struct Machine {
    std::array<u32, 96> r{};
    long steps = 0;
    bool ok = true;

    // Runs `code` from instruction 0 until it falls off the end (false on an unknown opcode or a
    // runaway loop).
    bool run(std::span<const u64> code, long max_steps = 100000) {
        long pc = 0;
        while (pc >= 0 && pc < static_cast<long>(code.size())) {
            if (++steps > max_steps)
                return ok = false;
            const Instr i = isa::decode(code[pc]);
            pc++;
            switch (i.opcode) {
            case isa::NOP: break;
            case isa::MOVE:
                r[i.dst] = static_cast<u32>(i.imm);
                r[i.dst + 1] = static_cast<u32>(i.imm >> 32);
                break;
            case isa::MOVE32: r[i.dst] = static_cast<u32>(i.imm); break;
            case isa::ADD_IMMEDIATE32: r[i.dst] = r[i.src] + static_cast<u32>(i.simm); break;
            case isa::ADD_IMMEDIATE64: {
                const u64 v =
                    (u64{r[i.src]} | u64{r[i.src + 1]} << 32) + static_cast<u64>(static_cast<int64_t>(i.simm));
                r[i.dst] = static_cast<u32>(v);
                r[i.dst + 1] = static_cast<u32>(v >> 32);
                break;
            }
            case isa::UMIN32: r[i.dst] = std::min(r[i.src0], r[i.src1]); break;
            case isa::BRANCH: {
                const int32_t v = static_cast<int32_t>(r[i.src]);
                bool taken = false;
                switch (i.cond) {
                case isa::LEQUAL: taken = v <= 0; break;
                case isa::GREATER: taken = v > 0; break;
                case isa::EQUAL: taken = v == 0; break;
                case isa::NEQUAL: taken = v != 0; break;
                case isa::LESS: taken = v < 0; break;
                case isa::GEQUAL: taken = v >= 0; break;
                case isa::ALWAYS: taken = true; break;
                default: return ok = false;
                }
                if (taken)
                    pc += i.offset;
                break;
            }
            default: return ok = false;
            }
        }
        return pc == static_cast<long>(code.size());
    }
};

// ---- every emitter, decoded ----

struct EmitCase {
    std::string name;
    std::function<void(Builder&)> emit;
    std::function<void(const std::vector<Instr>&)> check;
};

void PrintTo(const EmitCase& c, std::ostream* os) {
    *os << c.name;
}

class CsEmit : public ::testing::TestWithParam<EmitCase> {};

TEST_P(CsEmit, DecodesToTheFieldsGiven) {
    Builder b;
    GetParam().emit(b);
    ASSERT_TRUE(b.finish().ok()) << b.error_message();
    std::vector<Instr> out;
    for (u64 raw : b.instrs()) {
        out.push_back(isa::decode(raw));
        EXPECT_TRUE(out.back().valid);
    }
    GetParam().check(out);
}

std::vector<EmitCase> emit_cases() {
    constexpr u64 kVa = 0x0000'8000'1234'5640ull;
    return {
        {"Nop", [](Builder& b) { b.nop(); },
         [](auto& i) {
             ASSERT_EQ(i.size(), 1u);
             EXPECT_EQ(i[0].raw, 0u);
         }},
        {"PadToLine",
         [](Builder& b) {
             b.move32(b.reg32(1), 1);
             b.pad_to(8);
             b.pad_to(8);  // already aligned: nothing
         },
         [](auto& i) {
             ASSERT_EQ(i.size(), 8u);
             for (size_t k = 1; k < 8; k++)
                 EXPECT_EQ(i[k].opcode, isa::NOP);
         }},
        {"Move48", [kVa](Builder& b) { b.move48(b.reg64(10), kVa); },
         [kVa](auto& i) {
             ASSERT_EQ(i.size(), 1u);
             EXPECT_EQ(i[0].opcode, isa::MOVE);
             EXPECT_EQ(i[0].dst, 10);
             EXPECT_EQ(i[0].imm, kVa);
         }},
        {"Move64Fits48", [](Builder& b) { b.move64(b.reg64(4), 0xFFFF'FFFF'FFFFull); },
         [](auto& i) {
             ASSERT_EQ(i.size(), 1u);
             EXPECT_EQ(i[0].opcode, isa::MOVE);
             EXPECT_EQ(i[0].imm, 0xFFFF'FFFF'FFFFull);
         }},
        {"Move64Wide", [](Builder& b) { b.move64(b.reg64(4), 0xDEAD'BEEF'CAFE'F00Dull); },
         [](auto& i) {
             ASSERT_EQ(i.size(), 2u);
             EXPECT_EQ(i[0].opcode, isa::MOVE32);
             EXPECT_EQ(i[0].dst, 4);
             EXPECT_EQ(i[0].imm, 0xCAFE'F00Du);
             EXPECT_EQ(i[1].opcode, isa::MOVE32);
             EXPECT_EQ(i[1].dst, 5);
             EXPECT_EQ(i[1].imm, 0xDEAD'BEEFu);
         }},
        {"Move32", [](Builder& b) { b.move32(b.reg32(91), 0xDEADBEEF); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::MOVE32);
             EXPECT_EQ(i[0].dst, 91);
             EXPECT_EQ(i[0].imm, 0xDEADBEEFu);
         }},
        {"AddImmediate32", [](Builder& b) { b.add32(b.reg32(3), b.reg32(4), -7); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::ADD_IMMEDIATE32);
             EXPECT_EQ(i[0].dst, 3);
             EXPECT_EQ(i[0].src, 4);
             EXPECT_EQ(i[0].simm, -7);
         }},
        {"AddImmediate64", [](Builder& b) { b.add64(b.reg64(6), b.reg64(8), 0x12345); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::ADD_IMMEDIATE64);
             EXPECT_EQ(i[0].dst, 6);
             EXPECT_EQ(i[0].src, 8);
             EXPECT_EQ(i[0].simm, 0x12345);
         }},
        {"Umin32", [](Builder& b) { b.umin32(b.reg32(1), b.reg32(2), b.reg32(3)); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::UMIN32);
             EXPECT_EQ(i[0].dst, 1);
             EXPECT_EQ(i[0].src0, 2);
             EXPECT_EQ(i[0].src1, 3);
         }},
        {"LoadMultiple", [](Builder& b) { b.load_multiple(b.reg32(20), 0xF, b.reg64(30), -16); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::LOAD_MULTIPLE);
             EXPECT_EQ(i[0].base, 20);
             EXPECT_EQ(i[0].mask, 0xF);
             EXPECT_EQ(i[0].addr, 30);
             EXPECT_EQ(i[0].offset, -16);
         }},
        {"Load32And64",
         [](Builder& b) {
             b.load32(b.reg32(7), b.reg64(2), 4);
             b.load64(b.reg64(8), b.reg64(2), 8);
         },
         [](auto& i) {
             EXPECT_EQ(i[0].base, 7);
             EXPECT_EQ(i[0].mask, 0x1);
             EXPECT_EQ(i[0].offset, 4);
             EXPECT_EQ(i[1].opcode, isa::LOAD_MULTIPLE);
             EXPECT_EQ(i[1].base, 8);
             EXPECT_EQ(i[1].mask, 0x3);
             EXPECT_EQ(i[1].offset, 8);
         }},
        {"StoreMultiple", [](Builder& b) { b.store_multiple(b.reg32(40), 0x5, b.reg64(12), 0x100); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::STORE_MULTIPLE);
             EXPECT_EQ(i[0].base, 40);
             EXPECT_EQ(i[0].mask, 0x5);
             EXPECT_EQ(i[0].addr, 12);
             EXPECT_EQ(i[0].offset, 0x100);
         }},
        {"Store32And64",
         [](Builder& b) {
             b.store32(b.reg32(7), b.reg64(2));
             b.store64(b.reg64(8), b.reg64(2), -8);
         },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::STORE_MULTIPLE);
             EXPECT_EQ(i[0].mask, 0x1);
             EXPECT_EQ(i[1].opcode, isa::STORE_MULTIPLE);
             EXPECT_EQ(i[1].base, 8);
             EXPECT_EQ(i[1].mask, 0x3);
             EXPECT_EQ(i[1].offset, -8);
         }},
        {"Wait", [](Builder& b) { b.wait(0x05, true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::WAIT);
             EXPECT_EQ(i[0].wait_mask, 0x05);
             EXPECT_TRUE(i[0].progress_inc);
         }},
        {"WaitAllAndSlot",
         [](Builder& b) {
             b.wait_all();
             b.wait_slot(3);
         },
         [](auto& i) {
             // docs/hw/csf/cs-isa.md: the literal encoding of "WAIT all 8 entries".
             EXPECT_EQ(i[0].raw, 0x03000000'00FF0000ull);
             EXPECT_EQ(i[1].wait_mask, 0x08);
         }},
        {"SetSbEntry", [](Builder& b) { b.set_sb_entry(3, 1); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SET_SB_ENTRY);
             EXPECT_EQ(i[0].sb_endpoint, 3);
             EXPECT_EQ(i[0].sb_other, 1);
         }},
        {"ReqResource", [](Builder& b) { b.req_resource(true, false, true, false); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::REQ_RESOURCE);
             EXPECT_EQ(i[0].resources, 0b0101);
         }},
        {"RunCompute",
         [](Builder& b) { b.run_compute(5, isa::AXIS_Y, {.srt = 1, .fau = 2, .spd = 3, .tsd = 1}, true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::RUN_COMPUTE);
             EXPECT_EQ(i[0].task_increment, 5);
             EXPECT_EQ(i[0].task_axis, isa::AXIS_Y);
             EXPECT_TRUE(i[0].progress_inc);
             EXPECT_EQ(i[0].srt, 1);
             EXPECT_EQ(i[0].fau, 2);
             EXPECT_EQ(i[0].spd, 3);
             EXPECT_EQ(i[0].tsd, 1);
         }},
        {"RunComputeIndirect", [](Builder& b) { b.run_compute_indirect(64, {.spd = 2}); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::RUN_COMPUTE_INDIRECT);
             EXPECT_EQ(i[0].task_increment, 64);
             EXPECT_EQ(i[0].spd, 2);
         }},
        {"RunTiling", [](Builder& b) { b.run_tiling({.spd = 1, .tsd = 3}, 0xABC, true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::RUN_TILING);
             EXPECT_EQ(i[0].flags_override, 0xABCu);
             EXPECT_TRUE(i[0].progress_inc);
             EXPECT_EQ(i[0].spd, 1);
             EXPECT_EQ(i[0].tsd, 3);
         }},
        {"RunIdvs",
         [](Builder& b) {
             IdvsOptions o;
             o.flags_override = 0x55;
             o.malloc_enable = true;
             o.draw_id_enable = true;
             o.draw_id = b.reg32(7);
             o.varying_fau = true;
             o.fragment_tsd = true;
             b.run_idvs(o);
         },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::RUN_IDVS);
             EXPECT_EQ(i[0].flags_override, 0x55u);
             // The decoder returns bits [39:33] raw: malloc, draw-id enable, then the 5 selects
             // (varying SRT, FAU, TSD, fragment SRT, TSD).
             EXPECT_EQ(i[0].srt, 0b1 | 0b10 | (0b10010 << 2));
             EXPECT_EQ(i[0].dst, 7);
         }},
        {"RunFragment", [](Builder& b) { b.run_fragment(true, 5, true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::RUN_FRAGMENT);
             EXPECT_TRUE(i[0].enable_tem);
             EXPECT_EQ(i[0].tile_order, 5);
             EXPECT_TRUE(i[0].progress_inc);
         }},
        {"RunFullscreen", [](Builder& b) { b.run_fullscreen(b.reg64(12), 0x1234, true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::RUN_FULLSCREEN);
             EXPECT_EQ(i[0].addr, 12);
             EXPECT_EQ(i[0].flags_override, 0x1234u);
             EXPECT_TRUE(i[0].progress_inc);
         }},
        {"FinishTiling", [](Builder& b) { b.finish_tiling(true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::FINISH_TILING);
             EXPECT_TRUE(i[0].progress_inc);
         }},
        {"FinishFragment", [](Builder& b) { b.finish_fragment(true, b.reg64(2), b.reg64(4), 0x3, 2); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::FINISH_FRAGMENT);
             EXPECT_TRUE(i[0].inc_frag_end);
             EXPECT_EQ(i[0].last_chunk, 2);
             EXPECT_EQ(i[0].first_chunk, 4);
             EXPECT_EQ(i[0].wait_mask, 0x3);
             EXPECT_EQ(i[0].signal_slot, 2);
         }},
        {"ComputeShaderDescriptor", [kVa](Builder& b) { b.set_spd(kVa, 2); },
         [kVa](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::MOVE);
             EXPECT_EQ(i[0].dst, 20);  // d(16 + 2 * 2), what RUN_COMPUTE with spd select 2 reads
             EXPECT_EQ(i[0].imm, kVa);
         }},
        {"IdvsShaderDescriptor", [kVa](Builder& b) { b.set_idvs_shader(kVa); },
         [kVa](auto& i) {
             EXPECT_EQ(i[0].dst, 16);
             EXPECT_EQ(i[0].imm, kVa);
         }},
        {"FragmentFbd", [kVa](Builder& b) { b.set_fbd(kVa, 3); },
         [kVa](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::MOVE);
             EXPECT_EQ(i[0].dst, 40);
             EXPECT_EQ(i[0].imm, kVa | 3);
             EXPECT_EQ(i[0].imm & ~u64{63}, kVa);  // the mock reads its shader at d40 & ~63
         }},
        {"FullscreenDcd", [kVa](Builder& b) { b.set_dcd(b.reg64(12), kVa); },
         [kVa](auto& i) {
             EXPECT_EQ(i[0].dst, 12);
             EXPECT_EQ(i[0].imm, kVa);
         }},
        {"SyncAdd32", [](Builder& b) { b.sync_add32(b.reg64(2), b.reg32(5)); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SYNC_ADD32);
             EXPECT_EQ(i[0].addr, 2);
             EXPECT_EQ(i[0].data, 5);
             EXPECT_EQ(i[0].scope, isa::SCOPE_SYSTEM);
             EXPECT_TRUE(i[0].error_propagate);
         }},
        {"SyncSet32Options",
         [](Builder& b) {
             b.sync_set32(b.reg64(2), b.reg32(5),
                          {.scope = isa::SCOPE_CSG, .error_propagate = false, .wait_mask = 0x3, .signal_slot = 2});
         },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SYNC_SET32);
             EXPECT_EQ(i[0].scope, isa::SCOPE_CSG);
             EXPECT_FALSE(i[0].error_propagate);
             EXPECT_EQ(i[0].wait_mask, 0x3);
             EXPECT_EQ(i[0].signal_slot, 2);
         }},
        {"SyncAdd64", [](Builder& b) { b.sync_add64(b.reg64(84), b.reg64(86)); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SYNC_ADD64);
             EXPECT_EQ(i[0].addr, 84);
             EXPECT_EQ(i[0].data, 86);
         }},
        {"SyncSet64", [](Builder& b) { b.sync_set64(b.reg64(0), b.reg64(2), {.wait_mask = 0xFF}); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SYNC_SET64);
             EXPECT_EQ(i[0].wait_mask, 0xFF);
         }},
        {"SyncWait32", [](Builder& b) { b.sync_wait32(b.reg64(2), b.reg32(9), isa::GREATER, true); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SYNC_WAIT32);
             EXPECT_EQ(i[0].addr, 2);
             EXPECT_EQ(i[0].data, 9);
             EXPECT_EQ(i[0].cond, isa::GREATER);
             EXPECT_TRUE(i[0].error_reject);
         }},
        {"SyncWait64", [](Builder& b) { b.sync_wait64(b.reg64(2), b.reg64(10), isa::LEQUAL); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SYNC_WAIT64);
             EXPECT_EQ(i[0].data, 10);
             EXPECT_EQ(i[0].cond, isa::LEQUAL);
             EXPECT_FALSE(i[0].error_reject);
         }},
        {"CallAndJump",
         [](Builder& b) {
             b.call(b.reg64(2), b.reg32(4));
             b.jump(b.reg64(6), b.reg32(8));
         },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::CALL);
             EXPECT_EQ(i[0].addr, 2);
             EXPECT_EQ(i[0].length, 4);
             EXPECT_EQ(i[1].opcode, isa::JUMP);
             EXPECT_EQ(i[1].addr, 6);
             EXPECT_EQ(i[1].length, 8);
         }},
        {"CallBuffer", [kVa](Builder& b) { b.call_buffer(b.reg64(2), b.reg32(4), kVa, 128); },
         [kVa](auto& i) {
             ASSERT_EQ(i.size(), 3u);
             EXPECT_EQ(i[0].opcode, isa::MOVE);
             EXPECT_EQ(i[0].imm, kVa);
             EXPECT_EQ(i[1].opcode, isa::MOVE32);
             EXPECT_EQ(i[1].dst, 4);
             EXPECT_EQ(i[1].imm, 128u);
             EXPECT_EQ(i[2].opcode, isa::CALL);
         }},
        {"HeapSetAndOperation",
         [](Builder& b) {
             b.heap_set(b.reg64(2));
             b.heap_operation(isa::HEAP_VT_END, 0x1, 1);
         },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::HEAP_SET);
             EXPECT_EQ(i[0].addr, 2);
             EXPECT_EQ(i[1].opcode, isa::HEAP_OPERATION);
             EXPECT_EQ(i[1].heap_op, isa::HEAP_VT_END);
             EXPECT_EQ(i[1].wait_mask, 0x1);
             EXPECT_EQ(i[1].signal_slot, 1);
         }},
        {"FlushCache2",
         [](Builder& b) {
             b.flush_cache2(isa::FLUSH_CLEAN_INVALIDATE, isa::FLUSH_CLEAN, isa::OTHER_FLUSH_INVALIDATE, b.reg32(7), 0x2,
                            1);
         },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::FLUSH_CACHE2);
             EXPECT_EQ(i[0].l2, isa::FLUSH_CLEAN_INVALIDATE);
             EXPECT_EQ(i[0].lsc, isa::FLUSH_CLEAN);
             EXPECT_EQ(i[0].other, isa::OTHER_FLUSH_INVALIDATE);
             EXPECT_EQ(i[0].flush_id, 7);
             EXPECT_EQ(i[0].wait_mask, 0x2);
             EXPECT_EQ(i[0].signal_slot, 1);
         }},
        {"StoreState", [](Builder& b) { b.store_state(b.reg64(6), isa::STATE_CYCLE_COUNT, -8, 0x1, 0); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::STORE_STATE);
             EXPECT_EQ(i[0].addr, 6);
             EXPECT_EQ(i[0].state, isa::STATE_CYCLE_COUNT);
             EXPECT_EQ(i[0].offset, -8);
             EXPECT_EQ(i[0].wait_mask, 0x1);
         }},
        {"ErrorBarrier", [](Builder& b) { b.error_barrier(); },
         [](auto& i) { EXPECT_EQ(i[0].raw, 0x2F000000'00000000ull); }},
        {"SetExceptionHandler",
         [](Builder& b) { b.set_exception_handler(isa::EXCEPTION_TILER_OOM, b.reg64(8), b.reg32(10)); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::SET_EXCEPTION_HANDLER);
             EXPECT_EQ(i[0].exception, isa::EXCEPTION_TILER_OOM);
             EXPECT_EQ(i[0].addr, 8);
             EXPECT_EQ(i[0].length, 10);
         }},
        {"RawEmit", [](Builder& b) { b.emit(isa::progress_load(4)); },
         [](auto& i) {
             EXPECT_EQ(i[0].opcode, isa::PROGRESS_LOAD);
             EXPECT_EQ(i[0].dst, 4);
         }},
    };
}

INSTANTIATE_TEST_SUITE_P(Emitters, CsEmit, ::testing::ValuesIn(emit_cases()),
                         [](const ::testing::TestParamInfo<EmitCase>& p) { return p.param.name; });

// ---- labels and control flow ----

TEST(CsLabels, ForwardBranchIsPatchedRelativeToTheNextInstruction) {
    Builder b;
    Label l;
    b.branch(l, isa::NEQUAL, b.reg32(5));  // 0
    b.nop();                               // 1
    b.nop();                               // 2
    b.nop();                               // 3
    b.set_label(l);                        // -> 4
    b.nop();
    ASSERT_TRUE(b.finish().ok());
    const Instr i = isa::decode(b.at(0));
    EXPECT_EQ(i.opcode, isa::BRANCH);
    EXPECT_EQ(i.cond, isa::NEQUAL);
    EXPECT_EQ(i.src, 5);
    EXPECT_EQ(i.offset, 3);
}

TEST(CsLabels, BackwardBranchIsNegative) {
    Builder b;
    Label l;
    b.nop();
    b.set_label(l);                         // 1
    b.nop();                                // 1
    b.nop();                                // 2
    b.branch(l, isa::GREATER, b.reg32(2));  // 3: 1 - (3 + 1)
    ASSERT_TRUE(b.finish().ok());
    EXPECT_EQ(isa::decode(b.at(3)).offset, -3);
    EXPECT_EQ(isa::decode(b.at(3)).cond, isa::GREATER);
}

TEST(CsLabels, EveryForwardReferenceToOneLabelIsPatched) {
    Builder b;
    Label l;
    b.branch(l, isa::EQUAL, b.reg32(0));  // 0
    b.nop();
    b.branch(l, isa::LESS, b.reg32(1));  // 2
    b.branch(l);                         // 3, ALWAYS
    b.set_label(l);                      // 4
    ASSERT_TRUE(b.finish().ok());
    EXPECT_EQ(isa::decode(b.at(0)).offset, 3);
    EXPECT_EQ(isa::decode(b.at(2)).offset, 1);
    EXPECT_EQ(isa::decode(b.at(3)).offset, 0);
    EXPECT_EQ(isa::decode(b.at(3)).cond, isa::ALWAYS);
}

TEST(CsLabels, UnsetLabelWithAReferenceFailsFinish) {
    Builder b;
    {
        Label l;
        b.branch(l);
    }
    EXPECT_EQ(b.finish().error(), -EINVAL);
}

TEST(CsLabels, SettingALabelTwiceIsAnError) {
    Builder b;
    Label l;
    b.set_label(l);
    b.nop();
    b.set_label(l);
    EXPECT_EQ(b.error(), -EINVAL);
}

TEST(CsLabels, BranchBeyondSixteenBitsIsERange) {
    Builder fwd({}, 40000);
    Label l;
    fwd.branch(l);
    for (int k = 0; k < 32768; k++)
        fwd.nop();  // offset 32768: one too far
    fwd.set_label(l);
    EXPECT_EQ(fwd.error(), -ERANGE);

    Builder ok({}, 40000);
    Label l2;
    ok.branch(l2);
    for (int k = 0; k < 32767; k++)
        ok.nop();
    ok.set_label(l2);
    ASSERT_TRUE(ok.finish().ok());
    EXPECT_EQ(isa::decode(ok.at(0)).offset, 32767);

    Builder back({}, 40000);
    Label l3;
    back.set_label(l3);
    for (int k = 0; k < 32768; k++)
        back.nop();
    back.branch(l3);  // offset -32769
    EXPECT_EQ(back.error(), -ERANGE);
}

TEST(CsControlFlow, IfElseTakesTheRightArm) {
    for (u32 x : {0u, 5u}) {
        Builder b;
        b.move32(b.reg32(0), x);
        b.if_else(
            isa::EQUAL, b.reg32(0), [&] { b.move32(b.reg32(1), 1); }, [&] { b.move32(b.reg32(1), 2); });
        b.move32(b.reg32(2), 7);  // after the if: always runs
        ASSERT_TRUE(b.finish().ok());
        Machine m;
        ASSERT_TRUE(m.run(b.instrs()));
        EXPECT_EQ(m.r[1], x == 0 ? 1u : 2u) << "x=" << x;
        EXPECT_EQ(m.r[2], 7u);
    }
}

TEST(CsControlFlow, IfWithoutElseSkipsTheBody) {
    for (int32_t x : {-3, 0, 4}) {
        Builder b;
        b.move32(b.reg32(0), static_cast<u32>(x));
        b.if_(isa::GREATER, b.reg32(0), [&] { b.move32(b.reg32(1), 9); });
        ASSERT_TRUE(b.finish().ok());
        // One inverted BRANCH (LEQUAL) over the one-instruction body.
        const Instr br = isa::decode(b.at(1));
        EXPECT_EQ(br.cond, isa::LEQUAL);
        EXPECT_EQ(br.offset, 1);
        Machine m;
        ASSERT_TRUE(m.run(b.instrs()));
        EXPECT_EQ(m.r[1], x > 0 ? 9u : 0u) << "x=" << x;
    }
}

TEST(CsControlFlow, WhileLoopLayout) {
    Builder b;
    Loop l = b.begin_while(isa::GREATER, b.reg32(0));  // 0: BRANCH LEQUAL r0 -> end
    b.add32(b.reg32(0), b.reg32(0), -1);               // 1: body
    b.end_while(l);                                    // 2: BRANCH GREATER r0 -> 1
    ASSERT_TRUE(b.finish().ok());
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(isa::decode(b.at(0)).cond, isa::LEQUAL);
    EXPECT_EQ(isa::decode(b.at(0)).offset, 2);
    EXPECT_EQ(isa::decode(b.at(2)).cond, isa::GREATER);
    EXPECT_EQ(isa::decode(b.at(2)).offset, -2);
}

TEST(CsControlFlow, WhileWithAFalseConditionNeverRunsTheBody) {
    Builder b;
    b.move32(b.reg32(0), 0);
    b.while_(isa::GREATER, b.reg32(0), [&](Loop&) { b.add32(b.reg32(1), b.reg32(1), 1); });
    ASSERT_TRUE(b.finish().ok());
    Machine m;
    ASSERT_TRUE(m.run(b.instrs()));
    EXPECT_EQ(m.r[1], 0u);
}

TEST(CsControlFlow, NestedWhileLoopsRunTheProductOfTheirCounts) {
    Builder b;
    const Reg32 outer = b.reg32(0), inner = b.reg32(1), count = b.reg32(2), sum = b.reg32(3);
    b.move32(outer, 3);
    b.while_(isa::GREATER, outer, [&](Loop&) {
        b.move32(inner, 4);
        b.while_(isa::GREATER, inner, [&](Loop&) {
            b.add32(count, count, 1);
            b.if_(isa::EQUAL, b.reg32(4), [&] { b.add32(sum, sum, 10); });  // r4 == 0: always
            b.add32(inner, inner, -1);
        });
        b.add32(outer, outer, -1);
    });
    ASSERT_TRUE(b.finish().ok());
    Machine m;
    ASSERT_TRUE(m.run(b.instrs()));
    EXPECT_EQ(m.r[2], 12u);
    EXPECT_EQ(m.r[3], 120u);
    EXPECT_EQ(m.r[0], 0u);
}

TEST(CsControlFlow, BreakAndContinue) {
    Builder b;
    const Reg32 i = b.reg32(2), tmp = b.reg32(3), counted = b.reg32(4);
    b.while_(isa::ALWAYS, Reg32{}, [&](Loop& l) {
        b.add32(i, i, 1);
        b.add32(tmp, i, -5);
        b.loop_break(l, isa::EQUAL, tmp);  // i == 5: leave
        b.add32(tmp, i, -3);
        b.loop_continue(l, isa::EQUAL, tmp);  // i == 3: skip the count
        b.add32(counted, counted, 1);
    });
    b.move32(b.reg32(5), 1);  // reached after the break
    ASSERT_TRUE(b.finish().ok());
    // An ALWAYS loop has no check on entry: the body is the first instruction.
    EXPECT_EQ(isa::decode(b.at(0)).opcode, isa::ADD_IMMEDIATE32);
    Machine m;
    ASSERT_TRUE(m.run(b.instrs()));
    EXPECT_EQ(m.r[2], 5u);
    EXPECT_EQ(m.r[4], 3u);  // i = 1, 2, 4
    EXPECT_EQ(m.r[5], 1u);
}

TEST(CsControlFlow, UnclosedOrMisnestedBlocksFailFinish) {
    {
        Builder b;
        IfBlock blk = b.begin_if(isa::EQUAL, b.reg32(0));
        b.nop();
        (void)blk;
        EXPECT_EQ(b.finish().error(), -EINVAL);
    }
    {
        Builder b;
        IfBlock outer = b.begin_if(isa::EQUAL, b.reg32(0));
        Loop inner = b.begin_while(isa::GREATER, b.reg32(1));
        b.end_if(outer);  // the loop is innermost
        EXPECT_EQ(b.error(), -EINVAL);
        (void)inner;
    }
    {
        Builder b;
        IfBlock blk = b.begin_if(isa::EQUAL, b.reg32(0));
        b.begin_else(blk);
        b.begin_else(blk);  // a second else
        EXPECT_EQ(b.error(), -EINVAL);
    }
}

// ---- overflow ----

TEST(CsOverflow, OwnedBufferReportsENoSpcAndKeepsWhatFit) {
    Builder b({}, 4);
    for (u32 k = 0; k < 4; k++)
        b.move32(b.reg32(k), k);
    EXPECT_TRUE(b.ok());
    b.move32(b.reg32(9), 9);
    EXPECT_EQ(b.error(), -ENOSPC);
    b.nop();  // dropped
    EXPECT_EQ(b.size(), 4u);
    EXPECT_EQ(b.finish().error(), -ENOSPC);
    for (u32 k = 0; k < 4; k++)
        EXPECT_EQ(isa::decode(b.at(k)).imm, k);
}

TEST(CsOverflow, CallerMemoryIsNeverWrittenPastItsEnd) {
    std::array<u64, 6> mem;
    mem.fill(0xAAAA'AAAA'AAAA'AAAAull);
    constexpr u64 kVa = 0x10000;
    Builder b({}, mem.data(), kVa, 4 * sizeof(u64));
    EXPECT_EQ(b.capacity(), 4u);
    for (int k = 0; k < 6; k++)
        b.error_barrier();
    EXPECT_EQ(b.error(), -ENOSPC);
    EXPECT_EQ(b.data(), mem.data());
    for (int k = 0; k < 4; k++)
        EXPECT_EQ(mem[k], isa::error_barrier());
    EXPECT_EQ(mem[4], 0xAAAA'AAAA'AAAA'AAAAull);
    EXPECT_EQ(mem[5], 0xAAAA'AAAA'AAAA'AAAAull);
    EXPECT_EQ(b.gpu_va_at(3), kVa + 24);
}

TEST(CsOverflow, ABranchThatDidNotFitLeavesNoDanglingReference) {
    Builder b({}, 1);
    Label l;
    b.nop();
    b.branch(l);  // dropped
    b.set_label(l);
    EXPECT_EQ(b.finish().error(), -ENOSPC);
    EXPECT_EQ(b.size(), 1u);
}

// ---- register and operand checks ----

TEST(CsRegisters, KernelOwnedAndOddPairsAreRejected) {
    Builder b;  // 96 registers, the top 4 the kernel's
    EXPECT_EQ(b.nr_user_registers(), 92u);
    EXPECT_TRUE(b.is_user_reg32(91));
    EXPECT_FALSE(b.is_user_reg32(92));
    EXPECT_TRUE(b.is_user_reg64(90));
    EXPECT_FALSE(b.is_user_reg64(91));  // odd
    EXPECT_FALSE(b.is_user_reg64(92));  // kernel's
    b.reg32(91);
    b.reg64(90);
    EXPECT_TRUE(b.ok());
    b.reg64(7);
    EXPECT_EQ(b.error(), -EINVAL);
}

TEST(CsRegisters, ReservedTopDependsOnTheConfig) {
    Builder b(Config{.nr_registers = 128, .nr_kernel_registers = 4, .nr_scoreboards = 8});
    EXPECT_TRUE(b.is_user_reg64(122));
    EXPECT_FALSE(b.is_user_reg32(124));
}

struct BadOperand {
    std::string name;
    std::function<void(Builder&)> emit;
};
void PrintTo(const BadOperand& c, std::ostream* os) {
    *os << c.name;
}

class CsBadOperand : public ::testing::TestWithParam<BadOperand> {};

TEST_P(CsBadOperand, IsEInvalAndEmitsNothing) {
    Builder b(Config{.nr_registers = 96, .nr_kernel_registers = 4, .nr_scoreboards = 4});
    b.nop();
    GetParam().emit(b);
    EXPECT_EQ(b.error(), -EINVAL);
    EXPECT_FALSE(b.error_message().empty());
    EXPECT_EQ(b.size(), 1u);
    b.nop();  // the error sticks: nothing more is emitted
    EXPECT_EQ(b.size(), 1u);
    EXPECT_EQ(b.finish().error(), -EINVAL);
}

INSTANTIATE_TEST_SUITE_P(
    Operands, CsBadOperand,
    ::testing::Values(
        BadOperand{"Reg32InKernelRange", [](Builder& b) { b.reg32(92); }},
        BadOperand{"HandMadeKernelReg32", [](Builder& b) { b.move32(Reg32{95}, 1); }},
        BadOperand{"HandMadeOddPair", [](Builder& b) { b.move48(Reg64{3}, 1); }},
        BadOperand{"PairIntoKernelRange", [](Builder& b) { b.add64(Reg64{92}, Reg64{0}, 1); }},
        BadOperand{"Move48WiderThan48Bits", [](Builder& b) { b.move48(Reg64{0}, 1ull << 48); }},
        BadOperand{"LoadMaskSpillsIntoKernelRegs", [](Builder& b) { b.load_multiple(Reg32{90}, 0xF, Reg64{0}); }},
        BadOperand{"StoreEmptyMask", [](Builder& b) { b.store_multiple(Reg32{0}, 0, Reg64{2}); }},
        BadOperand{"WaitMissingScoreboard", [](Builder& b) { b.wait(0x10); }},
        BadOperand{"SetSbEntryOutOfRange", [](Builder& b) { b.set_sb_entry(4, 0); }},
        BadOperand{"RunComputeSelect", [](Builder& b) { b.run_compute(1, isa::AXIS_X, {.spd = 4}); }},
        BadOperand{"RunComputeTaskIncrement", [](Builder& b) { b.run_compute(1 << 14); }},
        BadOperand{"RunFragmentTileOrder", [](Builder& b) { b.run_fragment(false, 16); }},
        BadOperand{"FbdUnaligned", [](Builder& b) { b.set_fbd(0x1020); }},
        BadOperand{"SpdSelect", [](Builder& b) { b.set_spd(0x1000, 4); }},
        BadOperand{"SyncWaitEqual", [](Builder& b) { b.sync_wait32(Reg64{0}, Reg32{2}, isa::EQUAL); }},
        BadOperand{"SyncSignalSlot", [](Builder& b) { b.sync_add64(Reg64{0}, Reg64{2}, {.signal_slot = 4}); }},
        BadOperand{"SyncScope",
                   [](Builder& b) { b.sync_set32(Reg64{0}, Reg32{2}, {.scope = static_cast<SyncScope>(1)}); }},
        BadOperand{"HeapOperation", [](Builder& b) { b.heap_operation(static_cast<HeapOp>(2)); }},
        BadOperand{"FlushMode",
                   [](Builder& b) {
                       b.flush_cache2(static_cast<FlushMode>(2), isa::FLUSH_NONE, isa::OTHER_FLUSH_NONE, Reg32{0});
                   }},
        BadOperand{"CallBufferSize", [](Builder& b) { b.call_buffer(Reg64{0}, Reg32{2}, 0x1000, 12); }},
        BadOperand{"BranchOnKernelReg",
                   [](Builder& b) {
                       Label l;
                       b.branch(l, isa::EQUAL, Reg32{94});
                   }}),
    [](const ::testing::TestParamInfo<BadOperand>& p) { return p.param.name; });

TEST(CsRegisters, FirstErrorIsKept) {
    Builder b({}, 1);
    b.nop();
    b.nop();  // -ENOSPC
    b.move32(Reg32{95}, 0);
    EXPECT_EQ(b.error(), -ENOSPC);
}

// ---- result types ----

TEST(UmdResult, CarriesAValueOrAnErrno) {
    Result<int> v = 5;
    EXPECT_TRUE(v.ok());
    EXPECT_EQ(*v, 5);
    Result<int> e = err(-ENOENT);
    EXPECT_FALSE(e.ok());
    EXPECT_EQ(e.error(), -ENOENT);
    EXPECT_EQ(e.value_or(7), 7);
    EXPECT_EQ(e.status().error(), -ENOENT);
    Result<int> from_status = Status(err(-EBUSY));
    EXPECT_EQ(from_status.error(), -EBUSY);
    EXPECT_TRUE(Status::from_ret(0).ok());
    EXPECT_EQ(Status::from_ret(-EFAULT).error(), -EFAULT);
    // A non-negative "error" is a bug, never success.
    EXPECT_EQ(Status(err(0)).error(), -EIO);
}

}  // namespace
}  // namespace umd::cs
