// The `upanthor` command line: subcommand dispatch, option parsing, usage text and exit codes.
//
// DOC: `upanthor <command> [options]`. Each command parses its own options; anything it does not
// know (an unknown option, a missing value, a stray argument) is a usage error: one line naming
// the problem plus a pointer to `--help` on stderr, exit code 2, nothing run. Exit code 0 is
// success, 1 a failure of the command itself (a probe that failed, a file that cannot be read, a
// scenario whose expectations do not hold).
#pragma once
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace upanthor {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Runs the command line `args` (without the program name), printing to `out` / `err`. Returns the
// process exit code.
int cli_main(std::span<const std::string> args, std::FILE* out, std::FILE* err);

// `upanthor disasm FILE [--base VA]`: the CS disassembly of a raw little-endian file of 64-bit
// instructions. Exit code as above.
int cmd_disasm(const std::string& path, std::uint64_t base_va, std::FILE* out, std::FILE* err);

}  // namespace upanthor
