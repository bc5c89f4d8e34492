// A text assembler for a subset of the v10 command-stream ISA, the inverse of cs_disasm for the
// instructions it knows. (No upstream counterpart: Mesa builds streams with cs_builder.h only.)
//
// DOC: One instruction per line. A line reads "MNEMONIC operands"; operands are separated by
// commas or blanks, mnemonics and their dotted modifiers are case-insensitive, registers are r<N>
// (32-bit) and d<N> (the 64-bit pair rN:rN+1, N even). An immediate is decimal or 0x hex,
// optionally negative, with an optional leading '#'. A '#' that is not directly followed by a
// digit or a sign starts a comment, so "MOVE d0, #0x10  # the address" is one instruction.
//
// Two spellings are accepted for each instruction, and both give the same word:
//   the disassembler's (what cs_disasm prints)          the short one (docs/scenario-format.md)
//   NOP [#payload]                                        NOP
//   MOVE dN, #imm48 | @symbol[+offset]                    MOVE48 dN, imm48 | @symbol[+offset]
//   MOVE32 rN, #imm32                                     MOVE32 rN, imm32
//   ADD_IMMEDIATE32 rD, rS, #imm32                        ADD_IMM32 rD, rS, imm32
//   LOAD_MULTIPLE rB, [dA +|- off], mask=0xM              LOAD rD|dD, dA[, off]   (mask 0x1|0x3)
//   STORE_MULTIPLE rB, [dA +|- off], mask=0xM             STORE rS|dS, dA[, off]
//   WAIT[.progress] wait=0xM                              WAIT mask|all
//   SYNC_ADD64.system|.csg[.propagate] [dA], dV           SYNC_ADD64 dA, dV       (.system.propagate)
//       wait=0xM signal=sbN
//   SYNC_WAIT64.le|.gt[.reject] [dA], dR                  SYNC_WAIT64 dA, dR, le|gt
// The printing of the disassembler is the canonical form: disasm_instr(encode(parse(line))) gives
// the disassembler's spelling back. A SYNC_ADD64 without modifiers means .system.propagate (the
// builder's default); once a modifier is written, exactly the written ones apply.
//
// An immediate of MOVE may be a symbol, "@name" or "@name+offset", whose value only the caller
// knows (a BO's GPU VA in a scenario): parse_asm() keeps the name, the caller checks it, and
// encode() takes its value.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace umd::cs {

enum class AsmOp : std::uint8_t { Nop, Move48, Move32, AddImm32, Load, Store, Wait, SyncAdd64, SyncWait64 };
// The disassembler's mnemonic ("MOVE", "ADD_IMMEDIATE32", "LOAD_MULTIPLE", ...).
const char* asm_op_name(AsmOp op);

struct AsmInstr {
    AsmOp op = AsmOp::Nop;
    std::uint8_t dst = 0;                // MOVE/MOVE32/ADD dst, LOAD/STORE first register, SYNC_* address pair
    std::uint8_t src = 0;                // ADD src, LOAD/STORE address pair, SYNC_* value/reference pair
    std::uint16_t mask = 0;              // LOAD/STORE: registers dst+i for each bit i (0x1: rN, 0x3: dN)
    std::int64_t imm = 0;                // MOVE immediate or symbol offset, ADD addend, LOAD/STORE offset, WAIT mask,
                                         // NOP payload
    std::string symbol;                  // MOVE @symbol[+imm]; empty: imm is the value
    std::uint32_t symbol_column = 0;     // of the '@' operand, for the caller's diagnostics
    bool progress = false;               // WAIT.progress
    bool scope_csg = false;              // SYNC_ADD64 .csg (else .system)
    bool propagate = true;               // SYNC_ADD64 .propagate
    std::uint16_t sb_wait = 0;           // SYNC_ADD64 wait=
    std::uint8_t sb_signal = 0;          // SYNC_ADD64 signal=sbN
    bool cond_greater = false;           // SYNC_WAIT64 .gt (else .le)
    bool reject = false;                 // SYNC_WAIT64 .reject
    std::uint32_t line = 0, column = 0;  // of the mnemonic, 1-based within the text
};

// What the target accepts; the defaults are the whole v10 register file and 8 scoreboard entries.
struct AsmOptions {
    unsigned regs = 96;        // registers r0..r(regs-1) (a client passes its user registers)
    unsigned scoreboards = 8;  // WAIT masks and signal slots name entries below this
};

struct AsmError {
    std::uint32_t line = 0, column = 0;  // 1-based within the text
    std::string message;
    std::string to_string() const;  // "line:column: message"
};

struct AsmProgram {
    std::vector<AsmInstr> instrs;
    std::vector<AsmError> errors;  // every bad line is reported; instrs holds only the good ones
    bool ok() const { return errors.empty(); }
};

// Parses `text`, one instruction per line.
AsmProgram parse_asm(std::string_view text, const AsmOptions& opts = {});

// The 64-bit word of `in`; `symbol_value` is added to a MOVE's offset when in.symbol is set.
std::uint64_t encode(const AsmInstr& in, std::uint64_t symbol_value = 0);

struct AsmWords {
    std::vector<std::uint64_t> words;  // set iff errors is empty
    std::vector<AsmError> errors;
    bool ok() const { return errors.empty(); }
};

// Resolves a MOVE's symbol to its value; nullopt: undefined.
using AsmSymbols = std::function<std::optional<std::uint64_t>(std::string_view)>;

// Text to words: parse_asm, then every symbol through `symbols` (none given: a symbol is an error).
AsmWords assemble(std::string_view text, const AsmOptions& opts = {}, const AsmSymbols& symbols = {});

}  // namespace umd::cs
