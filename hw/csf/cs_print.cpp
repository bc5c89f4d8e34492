// Mirrors the instruction printer of Mesa's src/panfrost/lib/genxml/decode_csf.c (cs_print.h).
// Shared by the driver (devcoredump) and the client side (umd/cs_disasm, `upanthor disasm`); the
// line format is documented in umd/cs_disasm.h. It writes into a caller's buffer and never
// allocates, so the driver may print from any context.
#include "hw/csf/cs_print.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "hw/csf/cs_isa.h"

namespace panthor::cs {
namespace {

namespace isa = panthor::cs;

// A bounded, always NUL-terminated text buffer; what does not fit is dropped.
struct Out {
    Out(char* b, size_t n) : buf(b), size(n) {
        if (size)
            buf[0] = '\0';
    }
    char* buf;
    size_t size;
    size_t len = 0;
};

[[gnu::format(printf, 2, 3)]] void append(Out& s, const char* fmt, ...) {
    if (s.len + 1 >= s.size)
        return;
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(s.buf + s.len, s.size - s.len, fmt, ap);
    va_end(ap);
    if (n > 0)
        s.len += static_cast<size_t>(n) < s.size - s.len ? static_cast<size_t>(n) : s.size - s.len - 1;
}

Out& operator+=(Out& s, const char* str) {
    append(s, "%s", str);
    return s;
}

const char* cond_name(uint8_t c) {
    switch (c) {
    case isa::LEQUAL: return "le";
    case isa::GREATER: return "gt";
    case isa::EQUAL: return "eq";
    case isa::NEQUAL: return "ne";
    case isa::LESS: return "lt";
    case isa::GEQUAL: return "ge";
    case isa::ALWAYS: return "always";
    default: return nullptr;
    }
}

void append_cond(Out& s, uint8_t c) {
    if (const char* n = cond_name(c))
        append(s, ".%s", n);
    else
        append(s, ".cond%u", c);
}

void append_scope(Out& s, uint8_t scope) {
    if (scope == isa::SCOPE_SYSTEM)
        s += ".system";
    else if (scope == isa::SCOPE_CSG)
        s += ".csg";
    else
        append(s, ".scope%u", scope);
}

const char* flush_name(uint8_t m) {
    switch (m) {
    case isa::FLUSH_NONE: return "none";
    case isa::FLUSH_CLEAN: return "clean";
    case isa::FLUSH_CLEAN_INVALIDATE: return "clean_inv";
    default: return nullptr;
    }
}

void append_flush(Out& s, const char* what, uint8_t m, bool other) {
    const char* n = other ? (m == isa::OTHER_FLUSH_NONE         ? "none"
                             : m == isa::OTHER_FLUSH_INVALIDATE ? "inv"
                                                                : nullptr)
                          : flush_name(m);
    if (n)
        append(s, " %s=%s", what, n);
    else
        append(s, " %s=%u", what, m);
}

void append_sb(Out& s, uint16_t wait_mask, uint8_t signal_slot) {
    append(s, " wait=0x%x signal=sb%u", wait_mask, signal_slot);
}

void append_offset(Out& s, int32_t off) {
    if (off > 0)
        append(s, " + %d", off);
    else if (off < 0)
        append(s, " - %d", -off);
}

void append_selects(Out& s, const isa::Instr& i) {
    append(s, " srt=%u spd=%u tsd=%u fau=%u", i.srt, i.spd, i.tsd, i.fau);
}

const char* tile_order_name(uint8_t o) {
    switch (o) {
    case 0: return "z_order";
    case 1: return "horizontal";
    case 2: return "vertical";
    case 5: return "rev_horizontal";
    case 6: return "rev_vertical";
    default: return nullptr;
    }
}

const char* state_name(uint8_t st) {
    switch (st) {
    case isa::STATE_TIMESTAMP: return "timestamp";
    case isa::STATE_CYCLE_COUNT: return "cycle_count";
    case isa::STATE_DISJOINT_COUNT: return "disjoint_count";
    case isa::STATE_ERROR_STATUS: return "error_status";
    default: return "state?";
    }
}

const char* heap_op_name(uint8_t op) {
    switch (op) {
    case isa::HEAP_VT_START: return "vt_start";
    case isa::HEAP_VT_END: return "vt_end";
    case isa::HEAP_FRAG_END: return "frag_end";
    default: return nullptr;
    }
}

}  // namespace

size_t cs_print_instr(char* buf, size_t size, uint64_t raw, uint64_t va) {
    const isa::Instr i = isa::decode(raw);
    Out s{buf, size};
    if (!i.valid) {
        append(s, "UNKNOWN.0x%02x #0x%014" PRIx64, i.opcode, raw & ((uint64_t{1} << 56) - 1));
        return s.len;
    }
    s += isa::opcode_name(i.opcode);
    const char* progress = i.progress_inc ? ".progress" : "";
    switch (i.opcode) {
    case isa::NOP:
        if (raw & ((uint64_t{1} << 56) - 1))
            append(s, " #0x%014" PRIx64, raw & ((uint64_t{1} << 56) - 1));
        break;
    case isa::MOVE: append(s, " d%u, #0x%" PRIx64, i.dst, i.imm); break;
    case isa::MOVE32: append(s, " r%u, #0x%" PRIx64, i.dst, i.imm); break;
    case isa::WAIT: append(s, "%s wait=0x%x", progress, i.wait_mask); break;
    case isa::RUN_COMPUTE:
        append(s, "%s task_inc=%u axis=%c", progress, i.task_increment,
               i.task_axis <= isa::AXIS_Z ? "XYZ"[i.task_axis] : '?');
        append_selects(s, i);
        break;
    case isa::RUN_COMPUTE_INDIRECT:
        append(s, "%s wg_per_task=%u", progress, i.task_increment);
        append_selects(s, i);
        break;
    case isa::RUN_TILING:
        append(s, "%s flags=0x%x", progress, i.flags_override);
        append_selects(s, i);
        break;
    case isa::RUN_IDVS: {
        // decode() packs bits [33..39] into srt: malloc [0], draw-id enable [1], selects [6:2].
        const unsigned extra = i.srt;
        append(s, "%s%s flags=0x%x", progress, (extra & 1) ? ".malloc" : "", i.flags_override);
        if (extra & 2)
            append(s, " draw_id=r%u", i.dst);
        append(s, " vary_srt=%u vary_fau=%u vary_tsd=%u frag_srt=%u frag_tsd=%u", (extra >> 2) & 1, (extra >> 3) & 1,
               (extra >> 4) & 1, (extra >> 5) & 1, (extra >> 6) & 1);
        break;
    }
    case isa::RUN_FRAGMENT: {
        append(s, "%s%s", progress, i.enable_tem ? ".tem" : "");
        if (const char* o = tile_order_name(i.tile_order))
            append(s, " order=%s", o);
        else
            append(s, " order=%u", i.tile_order);
        break;
    }
    case isa::RUN_FULLSCREEN: append(s, "%s flags=0x%x dcd=d%u", progress, i.flags_override, i.addr); break;
    case isa::FINISH_TILING: s += progress; break;
    case isa::FINISH_FRAGMENT:
        append(s, "%s last=d%u first=d%u", i.inc_frag_end ? ".frag_end" : "", i.last_chunk, i.first_chunk);
        append_sb(s, i.wait_mask, i.signal_slot);
        break;
    case isa::ADD_IMMEDIATE32: append(s, " r%u, r%u, #%d", i.dst, i.src, i.simm); break;
    case isa::ADD_IMMEDIATE64: append(s, " d%u, d%u, #%d", i.dst, i.src, i.simm); break;
    case isa::UMIN32: append(s, " r%u, r%u, r%u", i.dst, i.src0, i.src1); break;
    case isa::LOAD_MULTIPLE:
    case isa::STORE_MULTIPLE:
        append(s, " r%u, [d%u", i.base, i.addr);
        append_offset(s, i.offset);
        append(s, "], mask=0x%04x", i.mask);
        break;
    case isa::BRANCH:
        append_cond(s, i.cond);
        // The offset counts instructions from the one after the branch.
        append(s, " r%u, #%+d -> 0x%" PRIx64, i.src, i.offset,
               va + 8 + static_cast<uint64_t>(static_cast<int64_t>(i.offset) * 8));
        break;
    case isa::SET_SB_ENTRY: append(s, " endpoint=sb%u other=sb%u", i.sb_endpoint, i.sb_other); break;
    case isa::PROGRESS_WAIT: append(s, " d%u, queue=%u", i.src, i.queue); break;
    case isa::SET_EXCEPTION_HANDLER:
        if (i.exception == isa::EXCEPTION_TILER_OOM)
            s += ".tiler_oom";
        else
            append(s, ".exception%u", i.exception);
        append(s, " d%u, r%u", i.addr, i.length);
        break;
    case isa::CALL:
    case isa::JUMP: append(s, " d%u, r%u", i.addr, i.length); break;
    case isa::REQ_RESOURCE: {
        static const char* const names[] = {"compute", "fragment", "tiler", "idvs"};
        bool any = false;
        for (unsigned b = 0; b < 4; b++) {
            if (i.resources & (1u << b)) {
                append(s, "%c%s", any ? '|' : ' ', names[b]);
                any = true;
            }
        }
        if (!any)
            s += " none";
        break;
    }
    case isa::FLUSH_CACHE2:
        append_flush(s, "l2", i.l2, false);
        append_flush(s, "lsc", i.lsc, false);
        append_flush(s, "other", i.other, true);
        append(s, " flush_id=r%u", i.flush_id);
        append_sb(s, i.wait_mask, i.signal_slot);
        break;
    case isa::SYNC_ADD32:
    case isa::SYNC_SET32:
    case isa::SYNC_ADD64:
    case isa::SYNC_SET64: {
        const bool wide = i.opcode == isa::SYNC_ADD64 || i.opcode == isa::SYNC_SET64;
        append_scope(s, i.scope);
        if (i.error_propagate)
            s += ".propagate";
        append(s, " [d%u], %c%u", i.addr, wide ? 'd' : 'r', i.data);
        append_sb(s, i.wait_mask, i.signal_slot);
        break;
    }
    case isa::SYNC_WAIT32:
    case isa::SYNC_WAIT64:
        append_cond(s, i.cond);
        if (i.error_reject)
            s += ".reject";
        append(s, " [d%u], %c%u", i.addr, i.opcode == isa::SYNC_WAIT64 ? 'd' : 'r', i.data);
        break;
    case isa::STORE_STATE:
        append(s, ".%s [d%u", state_name(i.state), i.addr);
        append_offset(s, i.offset);
        s += "]";
        append_sb(s, i.wait_mask, i.signal_slot);
        break;
    case isa::PROT_REGION: append(s, " #%u", i.size); break;
    case isa::PROGRESS_STORE: append(s, " d%u", i.src); break;
    case isa::PROGRESS_LOAD: append(s, " d%u", i.dst); break;
    case isa::ERROR_BARRIER: break;
    case isa::HEAP_SET: append(s, " d%u", i.addr); break;
    case isa::HEAP_OPERATION:
        if (const char* n = heap_op_name(i.heap_op))
            append(s, ".%s", n);
        else
            append(s, ".op%u", i.heap_op);
        append_sb(s, i.wait_mask, i.signal_slot);
        break;
    case isa::TRACE_POINT:
        append(s, " r%u, count=%u", i.base, i.count);
        append_sb(s, i.wait_mask, i.signal_slot);
        break;
    default: break;
    }
    return s.len;
}

size_t cs_print_line(char* buf, size_t size, uint64_t raw, uint64_t va) {
    Out s{buf, size};
    append(s, "%016" PRIx64 ": %016" PRIx64 "  ", va, raw);
    if (s.len + 1 < s.size)
        s.len += cs_print_instr(s.buf + s.len, s.size - s.len, raw, va);
    return s.len;
}

}  // namespace panthor::cs
