// Mirrors the command-stream half of Mesa's src/panfrost/lib/genxml/decode_csf.c (the printer, not
// the interpreter): one text line per v10 instruction, on top of panthor::cs::decode.
//
// DOC: A line reads "ADDR: RAW  MNEMONIC operands", e.g.
//   0000000000001000: 015c000000201000  MOVE d92, #0x201000
// Registers print as r<N> (32-bit) and d<N> (a 64-bit pair), modifiers as dotted suffixes of the
// mnemonic (.progress, .system/.csg, .propagate, .reject, conditions .le/.gt/...), scoreboard
// operands as "wait=0x<mask> signal=sb<N>". A BRANCH also shows its target address. An opcode v10
// does not define prints as "UNKNOWN.0x<op>" with its raw payload, so a corrupt stream stays
// readable instead of stopping the listing.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace umd::cs {

// The "MNEMONIC operands" part for one instruction at `va` (the VA only matters to BRANCH).
std::string disasm_instr(std::uint64_t raw, std::uint64_t va = 0);
// One full line without the trailing newline.
std::string disasm_line(std::uint64_t raw, std::uint64_t va);
// Every instruction of `code`, the first at `base_va`, one line each ('\n'-terminated).
std::string disasm(std::span<const std::uint64_t> code, std::uint64_t base_va = 0);

}  // namespace umd::cs
