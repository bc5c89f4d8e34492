// Tests of umd/cs_asm: the assembler is the inverse of cs_disasm for every instruction it knows
// (text -> word -> text, and word -> text -> word, over every modifier and operand form), the
// short scenario spellings give the same words, and bad lines are reported with line:column.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "hw/csf/cs_isa.h"
#include "umd/cs_asm.h"
#include "umd/cs_disasm.h"

namespace umd::cs {
namespace {

namespace isa = panthor::cs;

// Assembles one line that must be good.
AsmInstr one(std::string_view text, const AsmOptions& opts = {}) {
    AsmProgram p = parse_asm(text, opts);
    EXPECT_TRUE(p.ok()) << text << ": " << (p.errors.empty() ? "" : p.errors[0].to_string());
    EXPECT_EQ(p.instrs.size(), 1u) << text;
    return p.instrs.empty() ? AsmInstr{} : p.instrs[0];
}

// Lines in the disassembler's spelling, covering every AsmOp and each modifier and operand form.
struct Canonical {
    AsmOp op;
    const char* text;
};
void PrintTo(const Canonical& c, std::ostream* os) {
    *os << c.text;
}
const Canonical kCanonical[] = {
    {AsmOp::Nop, "NOP"},
    {AsmOp::Nop, "NOP #0x00000000001234"},
    {AsmOp::Move48, "MOVE d12, #0xabcdef012345"},
    {AsmOp::Move48, "MOVE d0, #0x0"},
    {AsmOp::Move32, "MOVE32 r7, #0xdeadbeef"},
    {AsmOp::Move32, "MOVE32 r95, #0x1"},
    {AsmOp::AddImm32, "ADD_IMMEDIATE32 r3, r4, #-5"},
    {AsmOp::AddImm32, "ADD_IMMEDIATE32 r0, r0, #2147483647"},
    {AsmOp::Load, "LOAD_MULTIPLE r4, [d10 + 8], mask=0x0003"},
    {AsmOp::Load, "LOAD_MULTIPLE r5, [d2], mask=0x0001"},
    {AsmOp::Load, "LOAD_MULTIPLE r0, [d2 - 32768], mask=0xffff"},
    {AsmOp::Store, "STORE_MULTIPLE r0, [d2 - 16], mask=0xf00f"},
    {AsmOp::Store, "STORE_MULTIPLE r6, [d4 + 32767], mask=0x0001"},
    {AsmOp::Wait, "WAIT wait=0x81"},
    {AsmOp::Wait, "WAIT.progress wait=0x1"},
    {AsmOp::Wait, "WAIT wait=0x0"},
    {AsmOp::SyncAdd64, "SYNC_ADD64.system.propagate [d92], d94 wait=0x0 signal=sb0"},
    {AsmOp::SyncAdd64, "SYNC_ADD64.csg [d30], d32 wait=0xff signal=sb7"},
    {AsmOp::SyncAdd64, "SYNC_ADD64.system [d0], d2 wait=0x3 signal=sb1"},
    {AsmOp::SyncWait64, "SYNC_WAIT64.le [d40], d42"},
    {AsmOp::SyncWait64, "SYNC_WAIT64.gt.reject [d40], d42"},
};

class CsAsmCanonical : public ::testing::TestWithParam<Canonical> {};

TEST_P(CsAsmCanonical, DisassemblesBackToTheSameText) {
    const AsmInstr in = one(GetParam().text);
    EXPECT_EQ(in.op, GetParam().op);
    const uint64_t word = encode(in);
    EXPECT_EQ(disasm_instr(word), GetParam().text);
    // And the word survives a second trip.
    AsmWords again = assemble(disasm_instr(word));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.words, std::vector<uint64_t>{word});
}

INSTANTIATE_TEST_SUITE_P(EveryForm, CsAsmCanonical, ::testing::ValuesIn(kCanonical),
                         [](const ::testing::TestParamInfo<Canonical>& info) {
                             std::string n = asm_op_name(info.param.op) + std::to_string(info.index);
                             for (char& c : n)
                                 if (!std::isalnum(static_cast<unsigned char>(c)))
                                     c = '_';
                             return n;
                         });

TEST(CsAsm, CanonicalTableCoversEveryInstructionTheAssemblerKnows) {
    std::set<AsmOp> seen;
    for (const Canonical& c : kCanonical)
        seen.insert(c.op);
    for (int op = 0; op <= static_cast<int>(AsmOp::SyncWait64); op++)
        EXPECT_TRUE(seen.count(static_cast<AsmOp>(op))) << asm_op_name(static_cast<AsmOp>(op));
}

// Words from the ISA encoders: assemble(disasm(word)) == word.
TEST(CsAsm, WordsFromTheEncodersSurviveDisasmThenAsm) {
    const uint64_t words[] = {
        isa::nop(),
        0x00000000000000ffull,
        isa::move48(12, 0xABCDEF012345),
        isa::move48(94, (uint64_t{1} << 48) - 1),
        isa::move32(7, 0xDEADBEEF),
        isa::add_imm32(3, 4, -5),
        isa::add_imm32(1, 1, INT32_MIN),
        isa::load_multiple(4, 10, 0x3, 8),
        isa::load_multiple(0, 2, 0x1, -1),
        isa::store_multiple(0, 2, 0xF00F, -16),
        isa::store_multiple(9, 8, 0x1),
        isa::wait(0xFF),
        isa::wait(0x1, true),
        isa::sync_add64(92, 94),
        isa::sync_add64(30, 32, isa::SCOPE_CSG, true, 0xFF, 7),
        isa::sync_add64(30, 32, isa::SCOPE_SYSTEM, false, 0x1, 2),
        isa::sync_wait64(40, 42, isa::LEQUAL),
        isa::sync_wait64(40, 42, isa::GREATER, true),
    };
    for (uint64_t w : words) {
        const std::string text = disasm_instr(w);
        AsmWords a = assemble(text);
        ASSERT_TRUE(a.ok()) << text << ": " << a.errors[0].to_string();
        EXPECT_EQ(a.words, std::vector<uint64_t>{w}) << text;
    }
}

// The short spellings of docs/scenario-format.md give the disassembler's words.
TEST(CsAsm, ShortSpellingsAssembleToTheCanonicalWords) {
    const std::pair<const char*, const char*> pairs[] = {
        {"nop", "NOP"},
        {"MOVE48 d4, 0x201000", "MOVE d4, #0x201000"},
        {"MOVE32 r1, -1", "MOVE32 r1, #0xffffffff"},
        {"ADD_IMM32 r1, r1, -8", "ADD_IMMEDIATE32 r1, r1, #-8"},
        {"LOAD d6, d4, 16", "LOAD_MULTIPLE r6, [d4 + 16], mask=0x0003"},
        {"LOAD r2, d0", "LOAD_MULTIPLE r2, [d0], mask=0x0001"},
        {"STORE r1, d4, -8", "STORE_MULTIPLE r1, [d4 - 8], mask=0x0001"},
        {"WAIT 0x3", "WAIT wait=0x3"},
        {"wait all", "WAIT wait=0xff"},
        {"SYNC_ADD64 d4, d6", "SYNC_ADD64.system.propagate [d4], d6 wait=0x0 signal=sb0"},
        {"SYNC_WAIT64 d4, d6, gt", "SYNC_WAIT64.gt [d4], d6"},
        {"SYNC_WAIT64 d4, d6, LE", "SYNC_WAIT64.le [d4], d6"},
        {"MOVE d0, 16", "MOVE d0, #0x10"},
    };
    for (auto [short_text, canonical] : pairs)
        EXPECT_EQ(disasm_instr(encode(one(short_text))), canonical) << short_text;
}

TEST(CsAsm, CommentsBlankLinesAndLineNumbers) {
    AsmProgram p = parse_asm("# a listing\n\n  MOVE d0, #0x10   # the address\nWAIT all#done\r\n", {});
    ASSERT_TRUE(p.ok()) << p.errors[0].to_string();
    ASSERT_EQ(p.instrs.size(), 2u);
    EXPECT_EQ(p.instrs[0].line, 3u);
    EXPECT_EQ(p.instrs[0].column, 3u);
    EXPECT_EQ(p.instrs[0].imm, 0x10);
    EXPECT_EQ(p.instrs[1].line, 4u);
}

TEST(CsAsm, SymbolsAreKeptForTheCallerAndResolvedByAssemble) {
    const AsmInstr in = one("MOVE48 d2, @data+0x40");
    EXPECT_EQ(in.symbol, "data");
    EXPECT_EQ(in.imm, 0x40);
    EXPECT_EQ(in.symbol_column, 12u);
    EXPECT_EQ(encode(in, 0x10000), isa::move48(2, 0x10040));

    auto symbols = [](std::string_view s) -> std::optional<uint64_t> {
        if (s == "data")
            return 0x20000;
        return std::nullopt;
    };
    AsmWords ok = assemble("MOVE d2, @data\nMOVE d4, @data+8\n", {}, symbols);
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(ok.words, (std::vector<uint64_t>{isa::move48(2, 0x20000), isa::move48(4, 0x20008)}));

    AsmWords bad = assemble("NOP\nMOVE d2, @nope\n", {}, symbols);
    ASSERT_EQ(bad.errors.size(), 1u);
    EXPECT_EQ(bad.errors[0].to_string(), "2:10: undefined symbol 'nope'");
    EXPECT_TRUE(bad.words.empty());
}

struct BadLine {
    const char* name;
    const char* text;
    AsmOptions opts;
    const char* error;  // "line:column: message" (a prefix of it)
};
void PrintTo(const BadLine& c, std::ostream* os) {
    *os << c.text;
}

class CsAsmErrors : public ::testing::TestWithParam<BadLine> {};

TEST_P(CsAsmErrors, ReportsLineColumnAndMessage) {
    const BadLine& c = GetParam();
    AsmProgram p = parse_asm(c.text, c.opts);
    ASSERT_EQ(p.errors.size(), 1u) << c.text;
    const std::string got = p.errors[0].to_string();
    EXPECT_EQ(got.substr(0, std::string(c.error).size()), c.error) << got;
}

const BadLine kBad[] = {
    {"UnknownMnemonic",
     "NOP\n  JUMP d0, r2\n",
     {},
     "2:3: unknown instruction 'JUMP' (expected one of: NOP, MOVE48, MOVE32, ADD_IMM32, LOAD, STORE, WAIT, SYNC_ADD64, "
     "SYNC_WAIT64, or the disassembler's MOVE, ADD_IMMEDIATE32, LOAD_MULTIPLE, STORE_MULTIPLE)"},
    {"UnknownModifier",
     "SYNC_WAIT64.eq [d0], d2",
     {},
     "1:12: unknown modifier '.eq' of SYNC_WAIT64 (expected .le, .gt, .reject)"},
    {"OddPair", "MOVE d1, #0x10", {}, "1:6: bad register 'd1' (expected a 64-bit register d0, d2 .. d94)"},
    {"RegisterAboveTheUserOnes",
     "MOVE32 r92, 1",
     {.regs = 92},
     "1:8: bad register 'r92' (expected a register r0..r91)"},
    {"RegisterWithoutNumber",
     "LOAD rx, d0",
     {},
     "1:6: bad register 'rx' (expected a register r0..r95 or 64-bit register"},
    {"AddressRegisterInBrackets", "LOAD_MULTIPLE r0, [d3 + 8], mask=0x1", {}, "1:20: bad register 'd3'"},
    {"ImmediateTooWide",
     "\n\nMOVE48 d0, 0x1000000000000",
     {},
     "3:12: bad immediate '0x1000000000000' (expected an integer in 0..281474976710655)"},
    {"ImmediateNotANumber",
     "ADD_IMM32 r1, r1, 12z",
     {},
     "1:19: bad immediate '12z' (expected an integer in -2147483648..2147483647)"},
    {"OffsetTooBig", "STORE r0, d2, 40000", {}, "1:15: bad immediate '40000' (expected an integer in -32768..32767)"},
    {"TrailingJunk",
     "MOVE32 r1, 5 junk",
     {},
     "1:14: unexpected 'junk' after the operands of MOVE32 (expected MOVE32 rN, imm32)"},
    {"TrailingOperand", "NOP #1, #2", {}, "1:9: unexpected '#2' after the operands of NOP"},
    {"TooFewOperands",
     "ADD_IMM32 r1, r2",
     {},
     "1:1: ADD_IMM32 takes 3 operands, got 2 (expected ADD_IMM32 rD, rS, imm32)"},
    {"EmptyOperand", "MOVE32 r1,, 1", {}, "1:11: empty operand"},
    {"BadCondition", "SYNC_WAIT64 d0, d2, eq", {}, "1:21: bad condition 'eq' (expected le or gt)"},
    {"ConditionTwice", "SYNC_WAIT64.gt d0, d2, le", {}, "1:24: unexpected 'le' after the operands of SYNC_WAIT64"},
    {"WaitMaskBeyondScoreboards",
     "WAIT wait=0x10",
     {.scoreboards = 4},
     "1:11: bad immediate '0x10' (expected an integer in 0..15)"},
    {"BadSignalSlot",
     "SYNC_ADD64.csg [d0], d2 wait=0x0 signal=sb9",
     {},
     "1:41: bad signal slot 'sb9' (expected sb0..sb7)"},
    {"UnknownNamedOperand", "LOAD_MULTIPLE r0, [d2], count=2", {}, "1:25: unexpected 'count=2' in LOAD_MULTIPLE"},
    {"MaskPastTheRegisterFile", "LOAD_MULTIPLE r90, [d2], mask=0x0100", {}, "1:31: bad register mask '0x0100'"},
    {"BadSymbol", "MOVE48 d0, @", {}, "1:12: bad symbol '@'"},
};

INSTANTIATE_TEST_SUITE_P(Lines, CsAsmErrors, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadLine>& info) { return std::string(info.param.name); });

TEST(CsAsm, EveryBadLineIsReportedAndGoodOnesKept) {
    AsmProgram p = parse_asm("NOP\nFOO\nMOVE32 r1, 1\nMOVE32 r1\n", {});
    ASSERT_EQ(p.errors.size(), 2u);
    EXPECT_EQ(p.errors[0].line, 2u);
    EXPECT_EQ(p.errors[1].line, 4u);
    EXPECT_EQ(p.instrs.size(), 2u);
}

}  // namespace
}  // namespace umd::cs
