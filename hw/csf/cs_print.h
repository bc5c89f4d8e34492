// Mirrors the instruction printer of Mesa's decode_csf.c, on panthor::cs::decode:
// one line of text per v10 instruction, written into the caller's buffer without allocating, so
// the driver can print from any context (devcoredump) and the client side (umd/cs_disasm) wraps
// it. Line format: "ADDR: RAW  MNEMONIC operands" (documented in umd/cs_disasm.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace panthor::cs {

// Longest line cs_print_line writes, NUL included, with room to spare.
inline constexpr size_t CS_PRINT_LINE_MAX = 256;

// "MNEMONIC operands" of one instruction at `va` (the VA only matters to BRANCH). Writes at most
// size bytes, NUL-terminated (when size > 0); returns the length written.
size_t cs_print_instr(char* buf, size_t size, uint64_t raw, uint64_t va);
// "ADDR: RAW  MNEMONIC operands", same contract.
size_t cs_print_line(char* buf, size_t size, uint64_t raw, uint64_t va);

}  // namespace panthor::cs
