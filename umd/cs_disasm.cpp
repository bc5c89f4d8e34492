// Mirrors the instruction printer of Mesa's src/panfrost/lib/genxml/decode_csf.c (cs_disasm.h).
// The printer itself is panthor/cs_print (the driver's devcoredump prints with it too); this is
// the std::string face the client side uses.
#include "umd/cs_disasm.h"

#include "hw/csf/cs_print.h"

namespace umd::cs {

std::string disasm_instr(uint64_t raw, uint64_t va) {
    char buf[panthor::cs::CS_PRINT_LINE_MAX];
    return std::string(buf, panthor::cs::cs_print_instr(buf, sizeof(buf), raw, va));
}

std::string disasm_line(uint64_t raw, uint64_t va) {
    char buf[panthor::cs::CS_PRINT_LINE_MAX];
    return std::string(buf, panthor::cs::cs_print_line(buf, sizeof(buf), raw, va));
}

std::string disasm(std::span<const uint64_t> code, uint64_t base_va) {
    std::string out;
    for (size_t k = 0; k < code.size(); k++) {
        out += disasm_line(code[k], base_va + 8 * k);
        out += '\n';
    }
    return out;
}

}  // namespace umd::cs
