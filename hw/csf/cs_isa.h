// The v10 (Mali-G610) command-stream instruction set: opcodes, enums, encoders and a decoder.
// Mirrors the CS section of Mesa's src/panfrost/genxml/v10.xml (docs/hw/csf/cs-isa.md); used by the
// driver (panthor's prepare_job_instrs), by tests that build streams, and by the mock firmware's
// interpreter. Definitions only: no behaviour beyond packing and unpacking bits.
//
// Every instruction is 64 bits; the opcode is bits [63:56], the payload bits [55:0]. Registers are
// 32-bit r0..r(N-1); a "dreg" operand K names the pair rK (low) : rK+1 (high).
#pragma once
#include <cstdint>

namespace panthor::cs {

enum Opcode : uint8_t {
    NOP = 0,
    MOVE = 1,  // MOVE48
    MOVE32 = 2,
    WAIT = 3,
    RUN_COMPUTE = 4,
    RUN_TILING = 5,
    RUN_IDVS = 6,
    RUN_FRAGMENT = 7,
    RUN_FULLSCREEN = 8,
    FINISH_TILING = 9,
    FINISH_FRAGMENT = 11,
    ADD_IMMEDIATE32 = 16,
    ADD_IMMEDIATE64 = 17,
    UMIN32 = 18,  // XML: COMPARE_SELECT32
    LOAD_MULTIPLE = 20,
    STORE_MULTIPLE = 21,
    BRANCH = 22,
    SET_SB_ENTRY = 23,
    PROGRESS_WAIT = 24,
    SET_EXCEPTION_HANDLER = 25,
    CALL = 32,
    JUMP = 33,
    REQ_RESOURCE = 34,
    FLUSH_CACHE2 = 36,
    SYNC_ADD32 = 37,
    SYNC_SET32 = 38,
    SYNC_WAIT32 = 39,
    STORE_STATE = 40,
    PROT_REGION = 41,
    PROGRESS_STORE = 42,
    PROGRESS_LOAD = 43,
    RUN_COMPUTE_INDIRECT = 44,
    ERROR_BARRIER = 47,
    HEAP_SET = 48,
    HEAP_OPERATION = 49,
    TRACE_POINT = 50,
    SYNC_ADD64 = 51,
    SYNC_SET64 = 52,
    SYNC_WAIT64 = 53,
};

// Opcodes defined on v10; everything else is an invalid encoding.
constexpr bool is_valid_opcode(uint8_t op) {
    switch (op) {
    case NOP:
    case MOVE:
    case MOVE32:
    case WAIT:
    case RUN_COMPUTE:
    case RUN_TILING:
    case RUN_IDVS:
    case RUN_FRAGMENT:
    case RUN_FULLSCREEN:
    case FINISH_TILING:
    case FINISH_FRAGMENT:
    case ADD_IMMEDIATE32:
    case ADD_IMMEDIATE64:
    case UMIN32:
    case LOAD_MULTIPLE:
    case STORE_MULTIPLE:
    case BRANCH:
    case SET_SB_ENTRY:
    case PROGRESS_WAIT:
    case SET_EXCEPTION_HANDLER:
    case CALL:
    case JUMP:
    case REQ_RESOURCE:
    case FLUSH_CACHE2:
    case SYNC_ADD32:
    case SYNC_SET32:
    case SYNC_WAIT32:
    case STORE_STATE:
    case PROT_REGION:
    case PROGRESS_STORE:
    case PROGRESS_LOAD:
    case RUN_COMPUTE_INDIRECT:
    case ERROR_BARRIER:
    case HEAP_SET:
    case HEAP_OPERATION:
    case TRACE_POINT:
    case SYNC_ADD64:
    case SYNC_SET64:
    case SYNC_WAIT64: return true;
    default: return false;
    }
}
const char* opcode_name(uint8_t op);

enum Condition : uint8_t { LEQUAL = 0, GREATER = 1, EQUAL = 2, NEQUAL = 3, LESS = 4, GEQUAL = 5, ALWAYS = 6 };
enum State : uint8_t { STATE_TIMESTAMP = 0, STATE_CYCLE_COUNT = 1, STATE_DISJOINT_COUNT = 2, STATE_ERROR_STATUS = 3 };
enum HeapOp : uint8_t { HEAP_VT_START = 0, HEAP_VT_END = 1, HEAP_FRAG_END = 3 };
enum FlushMode : uint8_t { FLUSH_NONE = 0, FLUSH_CLEAN = 1, FLUSH_CLEAN_INVALIDATE = 3 };
enum OtherFlushMode : uint8_t { OTHER_FLUSH_NONE = 0, OTHER_FLUSH_INVALIDATE = 2 };
enum SyncScope : uint8_t { SCOPE_SYSTEM = 0, SCOPE_CSG = 2 };
enum TaskAxis : uint8_t { AXIS_X = 0, AXIS_Y = 1, AXIS_Z = 2 };
inline constexpr uint8_t EXCEPTION_TILER_OOM = 2;

// Call depth on G610: 8 frames including the root.
inline constexpr uint32_t kCallStackDepth = 8;

namespace detail {
constexpr uint64_t f(uint64_t v, unsigned lo, unsigned width) {
    return (v & ((width >= 64) ? ~0ull : ((1ull << width) - 1))) << lo;
}
constexpr uint64_t op(Opcode o) {
    return uint64_t{o} << 56;
}
}  // namespace detail

// ---- Encoders (field names as in v10.xml) ------------------------------------------------------
using detail::f;
constexpr uint64_t nop() {
    return 0;
}
constexpr uint64_t move48(uint8_t dst, uint64_t imm48) {
    return detail::op(MOVE) | f(dst, 48, 8) | f(imm48, 0, 48);
}
constexpr uint64_t move32(uint8_t dst, uint32_t imm32) {
    return detail::op(MOVE32) | f(dst, 48, 8) | imm32;
}
constexpr uint64_t wait(uint16_t sb_mask, bool progress_inc = false) {
    return detail::op(WAIT) | f(sb_mask, 16, 8) | f(progress_inc, 32, 1);
}
constexpr uint64_t run_compute(uint16_t task_increment = 1, TaskAxis axis = AXIS_X, bool progress_inc = false,
                               uint8_t srt = 0, uint8_t spd = 0, uint8_t tsd = 0, uint8_t fau = 0) {
    return detail::op(RUN_COMPUTE) | f(task_increment, 0, 14) | f(axis, 14, 2) | f(progress_inc, 32, 1) |
           f(srt, 40, 2) | f(spd, 42, 2) | f(tsd, 44, 2) | f(fau, 46, 2);
}
constexpr uint64_t run_tiling(uint32_t flags_override = 0, bool progress_inc = false, uint8_t srt = 0, uint8_t spd = 0,
                              uint8_t tsd = 0, uint8_t fau = 0) {
    return detail::op(RUN_TILING) | flags_override | f(progress_inc, 32, 1) | f(srt, 40, 2) | f(spd, 42, 2) |
           f(tsd, 44, 2) | f(fau, 46, 2);
}
constexpr uint64_t run_idvs(uint32_t flags_override = 0, bool progress_inc = false, bool malloc_enable = false,
                            bool draw_id_reg_enable = false, uint8_t draw_id_reg = 0, uint8_t sel_bits = 0) {
    // sel_bits: varying SRT [0], varying FAU [1], varying TSD [2], fragment SRT [3], fragment TSD [4].
    return detail::op(RUN_IDVS) | flags_override | f(progress_inc, 32, 1) | f(malloc_enable, 33, 1) |
           f(draw_id_reg_enable, 34, 1) | f(sel_bits, 35, 5) | f(draw_id_reg, 40, 8);
}
constexpr uint64_t run_fragment(bool enable_tem = false, uint8_t tile_order = 0, bool progress_inc = false) {
    return detail::op(RUN_FRAGMENT) | f(enable_tem, 0, 1) | f(tile_order, 4, 4) | f(progress_inc, 32, 1);
}
constexpr uint64_t run_fullscreen(uint32_t flags_override, uint8_t dcd, bool progress_inc = false) {
    return detail::op(RUN_FULLSCREEN) | flags_override | f(progress_inc, 32, 1) | f(dcd, 40, 8);
}
constexpr uint64_t finish_tiling(bool progress_inc = false) {
    return detail::op(FINISH_TILING) | f(progress_inc, 32, 1);
}
constexpr uint64_t finish_fragment(bool inc_frag_end, uint16_t wait_mask, uint8_t last_chunk, uint8_t first_chunk,
                                   uint8_t signal_slot) {
    return detail::op(FINISH_FRAGMENT) | f(inc_frag_end, 0, 1) | f(wait_mask, 16, 16) | f(last_chunk, 32, 8) |
           f(first_chunk, 40, 8) | f(signal_slot, 48, 4);
}
constexpr uint64_t add_imm32(uint8_t dst, uint8_t src, int32_t imm) {
    return detail::op(ADD_IMMEDIATE32) | f(dst, 48, 8) | f(src, 40, 8) | static_cast<uint32_t>(imm);
}
constexpr uint64_t add_imm64(uint8_t dst, uint8_t src, int32_t imm) {
    return detail::op(ADD_IMMEDIATE64) | f(dst, 48, 8) | f(src, 40, 8) | static_cast<uint32_t>(imm);
}
constexpr uint64_t umin32(uint8_t dst, uint8_t src0, uint8_t src1) {
    return detail::op(UMIN32) | f(dst, 48, 8) | f(src0, 40, 8) | f(src1, 32, 8);
}
constexpr uint64_t load_multiple(uint8_t base, uint8_t addr, uint16_t mask, int16_t offset = 0) {
    return detail::op(LOAD_MULTIPLE) | f(base, 48, 8) | f(addr, 40, 8) | f(mask, 16, 16) |
           static_cast<uint16_t>(offset);
}
constexpr uint64_t store_multiple(uint8_t base, uint8_t addr, uint16_t mask, int16_t offset = 0) {
    return detail::op(STORE_MULTIPLE) | f(base, 48, 8) | f(addr, 40, 8) | f(mask, 16, 16) |
           static_cast<uint16_t>(offset);
}
constexpr uint64_t branch(Condition cond, uint8_t value_reg, int16_t offset) {
    return detail::op(BRANCH) | f(value_reg, 40, 8) | f(cond, 28, 3) | static_cast<uint16_t>(offset);
}
constexpr uint64_t set_sb_entry(uint8_t endpoint_entry, uint8_t other_entry) {
    return detail::op(SET_SB_ENTRY) | f(endpoint_entry, 0, 4) | f(other_entry, 4, 4);
}
constexpr uint64_t progress_wait(uint8_t source, uint8_t queue) {
    return detail::op(PROGRESS_WAIT) | f(source, 40, 8) | f(queue, 0, 5);
}
constexpr uint64_t set_exception_handler(uint8_t exception, uint8_t addr, uint8_t length) {
    return detail::op(SET_EXCEPTION_HANDLER) | f(exception, 0, 8) | f(length, 32, 8) | f(addr, 40, 8);
}
constexpr uint64_t call(uint8_t addr, uint8_t length) {
    return detail::op(CALL) | f(addr, 40, 8) | f(length, 32, 8);
}
constexpr uint64_t jump(uint8_t addr, uint8_t length) {
    return detail::op(JUMP) | f(addr, 40, 8) | f(length, 32, 8);
}
constexpr uint64_t req_resource(bool compute, bool fragment, bool tiler, bool idvs) {
    return detail::op(REQ_RESOURCE) | f(compute, 0, 1) | f(fragment, 1, 1) | f(tiler, 2, 1) | f(idvs, 3, 1);
}
constexpr uint64_t flush_cache2(FlushMode l2, FlushMode lsc, OtherFlushMode other, uint8_t flush_id_reg,
                                uint16_t wait_mask, uint8_t signal_slot) {
    return detail::op(FLUSH_CACHE2) | f(l2, 0, 4) | f(lsc, 4, 4) | f(other, 8, 4) | f(wait_mask, 16, 16) |
           f(flush_id_reg, 40, 8) | f(signal_slot, 48, 4);
}
namespace detail {
constexpr uint64_t sync_op(Opcode o, bool error_propagate, SyncScope scope, uint16_t wait_mask, uint8_t data,
                           uint8_t addr, uint8_t signal_slot) {
    return op(o) | f(error_propagate, 0, 1) | f(scope, 1, 2) | f(wait_mask, 16, 16) | f(data, 32, 8) | f(addr, 40, 8) |
           f(signal_slot, 48, 4);
}
constexpr uint64_t sync_wait(Opcode o, bool error_reject, Condition cond, uint8_t data, uint8_t addr) {
    return op(o) | f(error_reject, 0, 1) | f(cond, 28, 4) | f(data, 32, 8) | f(addr, 40, 8);
}
}  // namespace detail
constexpr uint64_t sync_add32(uint8_t addr, uint8_t data, SyncScope scope = SCOPE_SYSTEM, bool error_propagate = true,
                              uint16_t wait_mask = 0, uint8_t signal_slot = 0) {
    return detail::sync_op(SYNC_ADD32, error_propagate, scope, wait_mask, data, addr, signal_slot);
}
constexpr uint64_t sync_set32(uint8_t addr, uint8_t data, SyncScope scope = SCOPE_SYSTEM, bool error_propagate = true,
                              uint16_t wait_mask = 0, uint8_t signal_slot = 0) {
    return detail::sync_op(SYNC_SET32, error_propagate, scope, wait_mask, data, addr, signal_slot);
}
constexpr uint64_t sync_add64(uint8_t addr, uint8_t data, SyncScope scope = SCOPE_SYSTEM, bool error_propagate = true,
                              uint16_t wait_mask = 0, uint8_t signal_slot = 0) {
    return detail::sync_op(SYNC_ADD64, error_propagate, scope, wait_mask, data, addr, signal_slot);
}
constexpr uint64_t sync_set64(uint8_t addr, uint8_t data, SyncScope scope = SCOPE_SYSTEM, bool error_propagate = true,
                              uint16_t wait_mask = 0, uint8_t signal_slot = 0) {
    return detail::sync_op(SYNC_SET64, error_propagate, scope, wait_mask, data, addr, signal_slot);
}
constexpr uint64_t sync_wait32(uint8_t addr, uint8_t data, Condition cond, bool error_reject = false) {
    return detail::sync_wait(SYNC_WAIT32, error_reject, cond, data, addr);
}
constexpr uint64_t sync_wait64(uint8_t addr, uint8_t data, Condition cond, bool error_reject = false) {
    return detail::sync_wait(SYNC_WAIT64, error_reject, cond, data, addr);
}
constexpr uint64_t store_state(uint8_t addr, State state, int16_t offset = 0, uint16_t wait_mask = 0,
                               uint8_t signal_slot = 0) {
    return detail::op(STORE_STATE) | f(addr, 40, 8) | f(state, 32, 2) | f(wait_mask, 16, 16) | f(signal_slot, 48, 4) |
           static_cast<uint16_t>(offset);
}
constexpr uint64_t prot_region(uint16_t size_instrs) {
    return detail::op(PROT_REGION) | size_instrs;
}
constexpr uint64_t progress_store(uint8_t src) {
    return detail::op(PROGRESS_STORE) | f(src, 40, 8);
}
constexpr uint64_t progress_load(uint8_t dst) {
    return detail::op(PROGRESS_LOAD) | f(dst, 48, 8);
}
constexpr uint64_t run_compute_indirect(uint16_t wg_per_task, bool progress_inc = false, uint8_t srt = 0,
                                        uint8_t spd = 0, uint8_t tsd = 0, uint8_t fau = 0) {
    return detail::op(RUN_COMPUTE_INDIRECT) | wg_per_task | f(progress_inc, 32, 1) | f(srt, 40, 2) | f(spd, 42, 2) |
           f(tsd, 44, 2) | f(fau, 46, 2);
}
constexpr uint64_t error_barrier() {
    return detail::op(ERROR_BARRIER);
}
constexpr uint64_t heap_set(uint8_t addr) {
    return detail::op(HEAP_SET) | f(addr, 40, 8);
}
constexpr uint64_t heap_operation(HeapOp operation, uint16_t wait_mask = 0, uint8_t signal_slot = 0) {
    return detail::op(HEAP_OPERATION) | f(wait_mask, 16, 16) | f(operation, 32, 2) | f(signal_slot, 48, 4);
}
constexpr uint64_t trace_point(uint8_t base, uint8_t count, uint16_t wait_mask = 0, uint8_t signal_slot = 0) {
    return detail::op(TRACE_POINT) | f(wait_mask, 16, 16) | f(base, 32, 8) | f(count, 40, 8) | f(signal_slot, 48, 4);
}

// ---- Decoder -----------------------------------------------------------------------------------
// One struct carries every field any opcode has; decode() fills those the opcode defines and
// leaves the others zero. Field names follow v10.xml.
struct Instr {
    uint64_t raw = 0;
    uint8_t opcode = 0;
    bool valid = false;                            // a v10 opcode
    uint8_t dst = 0, src = 0, src0 = 0, src1 = 0;  // register / dreg indices
    uint8_t addr = 0;                              // address dreg
    uint8_t data = 0;                              // data reg / dreg of SYNC_*
    uint8_t base = 0;                              // LOAD/STORE_MULTIPLE base, TRACE_POINT base
    uint8_t length = 0;                            // CALL/JUMP/SET_EXCEPTION_HANDLER length reg
    uint64_t imm = 0;                              // MOVE imm48, MOVE32 imm32
    int32_t simm = 0;                              // ADD_IMMEDIATE* (signed 32)
    int16_t offset = 0;                            // LOAD/STORE_MULTIPLE, BRANCH, STORE_STATE
    uint16_t mask = 0;                             // LOAD/STORE_MULTIPLE register mask
    uint16_t wait_mask = 0;
    uint8_t signal_slot = 0;
    uint8_t cond = 0;  // BRANCH / SYNC_WAIT condition
    uint8_t scope = 0;
    bool error_propagate = false;  // SYNC_ADD/SET
    bool error_reject = false;     // SYNC_WAIT
    bool progress_inc = false;
    uint8_t state = 0;                           // STORE_STATE
    uint8_t heap_op = 0;                         // HEAP_OPERATION
    uint8_t l2 = 0, lsc = 0, other = 0;          // FLUSH_CACHE2 modes
    uint8_t flush_id = 0;                        // FLUSH_CACHE2 latest-flush-ID reg
    uint8_t srt = 0, spd = 0, tsd = 0, fau = 0;  // RUN_* selects
    uint32_t flags_override = 0;
    uint16_t task_increment = 0;
    uint8_t task_axis = 0;
    uint8_t sb_endpoint = 0, sb_other = 0;    // SET_SB_ENTRY
    uint8_t resources = 0;                    // REQ_RESOURCE bits [3:0]
    uint8_t exception = 0;                    // SET_EXCEPTION_HANDLER
    uint8_t queue = 0;                        // PROGRESS_WAIT
    uint8_t count = 0;                        // TRACE_POINT register count
    bool inc_frag_end = false;                // FINISH_FRAGMENT
    uint8_t last_chunk = 0, first_chunk = 0;  // FINISH_FRAGMENT dregs
    bool enable_tem = false;
    uint8_t tile_order = 0;
    uint16_t size = 0;  // PROT_REGION (instructions)
};

constexpr Instr decode(uint64_t raw) {
    auto bits = [raw](unsigned lo, unsigned width) -> uint64_t { return (raw >> lo) & ((1ull << width) - 1); };
    Instr i;
    i.raw = raw;
    i.opcode = static_cast<uint8_t>(raw >> 56);
    i.valid = is_valid_opcode(i.opcode);
    const auto b8 = [&](unsigned lo) { return static_cast<uint8_t>(bits(lo, 8)); };
    switch (i.opcode) {
    case MOVE:
        i.dst = b8(48);
        i.imm = bits(0, 48);
        break;
    case MOVE32:
        i.dst = b8(48);
        i.imm = bits(0, 32);
        break;
    case WAIT:
        i.wait_mask = static_cast<uint16_t>(bits(16, 8));
        i.progress_inc = bits(32, 1);
        break;
    case RUN_COMPUTE:
    case RUN_COMPUTE_INDIRECT:
    case RUN_TILING:
        if (i.opcode == RUN_COMPUTE) {
            i.task_increment = static_cast<uint16_t>(bits(0, 14));
            i.task_axis = static_cast<uint8_t>(bits(14, 2));
        } else if (i.opcode == RUN_COMPUTE_INDIRECT) {
            i.task_increment = static_cast<uint16_t>(bits(0, 16));
        } else {
            i.flags_override = static_cast<uint32_t>(bits(0, 32));
        }
        i.progress_inc = bits(32, 1);
        i.srt = static_cast<uint8_t>(bits(40, 2));
        i.spd = static_cast<uint8_t>(bits(42, 2));
        i.tsd = static_cast<uint8_t>(bits(44, 2));
        i.fau = static_cast<uint8_t>(bits(46, 2));
        break;
    case RUN_IDVS:
        i.flags_override = static_cast<uint32_t>(bits(0, 32));
        i.progress_inc = bits(32, 1);
        i.srt = static_cast<uint8_t>(bits(33, 7));  // malloc, draw-id enable, selects [33..39]
        i.dst = b8(40);                             // draw-id reg
        break;
    case RUN_FRAGMENT:
        i.enable_tem = bits(0, 1);
        i.tile_order = static_cast<uint8_t>(bits(4, 4));
        i.progress_inc = bits(32, 1);
        break;
    case RUN_FULLSCREEN:
        i.flags_override = static_cast<uint32_t>(bits(0, 32));
        i.progress_inc = bits(32, 1);
        i.addr = b8(40);  // DCD dreg
        break;
    case FINISH_TILING: i.progress_inc = bits(32, 1); break;
    case FINISH_FRAGMENT:
        i.inc_frag_end = bits(0, 1);
        i.wait_mask = static_cast<uint16_t>(bits(16, 16));
        i.last_chunk = b8(32);
        i.first_chunk = b8(40);
        i.signal_slot = static_cast<uint8_t>(bits(48, 4));
        break;
    case ADD_IMMEDIATE32:
    case ADD_IMMEDIATE64:
        i.simm = static_cast<int32_t>(static_cast<uint32_t>(bits(0, 32)));
        i.src = b8(40);
        i.dst = b8(48);
        break;
    case UMIN32:
        i.src1 = b8(32);
        i.src0 = b8(40);
        i.dst = b8(48);
        break;
    case LOAD_MULTIPLE:
    case STORE_MULTIPLE:
        i.offset = static_cast<int16_t>(bits(0, 16));
        i.mask = static_cast<uint16_t>(bits(16, 16));
        i.addr = b8(40);
        i.base = b8(48);
        break;
    case BRANCH:
        i.offset = static_cast<int16_t>(bits(0, 16));
        i.cond = static_cast<uint8_t>(bits(28, 3));
        i.src = b8(40);
        break;
    case SET_SB_ENTRY:
        i.sb_endpoint = static_cast<uint8_t>(bits(0, 4));
        i.sb_other = static_cast<uint8_t>(bits(4, 4));
        break;
    case PROGRESS_WAIT:
        i.queue = static_cast<uint8_t>(bits(0, 5));
        i.src = b8(40);
        break;
    case SET_EXCEPTION_HANDLER:
        i.exception = b8(0);
        i.length = b8(32);
        i.addr = b8(40);
        break;
    case CALL:
    case JUMP:
        i.length = b8(32);
        i.addr = b8(40);
        break;
    case REQ_RESOURCE: i.resources = static_cast<uint8_t>(bits(0, 4)); break;
    case FLUSH_CACHE2:
        i.l2 = static_cast<uint8_t>(bits(0, 4));
        i.lsc = static_cast<uint8_t>(bits(4, 4));
        i.other = static_cast<uint8_t>(bits(8, 4));
        i.wait_mask = static_cast<uint16_t>(bits(16, 16));
        i.flush_id = b8(40);
        i.signal_slot = static_cast<uint8_t>(bits(48, 4));
        break;
    case SYNC_ADD32:
    case SYNC_SET32:
    case SYNC_ADD64:
    case SYNC_SET64:
        i.error_propagate = bits(0, 1);
        i.scope = static_cast<uint8_t>(bits(1, 2));
        i.wait_mask = static_cast<uint16_t>(bits(16, 16));
        i.data = b8(32);
        i.addr = b8(40);
        i.signal_slot = static_cast<uint8_t>(bits(48, 4));
        break;
    case SYNC_WAIT32:
    case SYNC_WAIT64:
        i.error_reject = bits(0, 1);
        i.cond = static_cast<uint8_t>(bits(28, 4));
        i.data = b8(32);
        i.addr = b8(40);
        break;
    case STORE_STATE:
        i.offset = static_cast<int16_t>(bits(0, 16));
        i.wait_mask = static_cast<uint16_t>(bits(16, 16));
        i.state = static_cast<uint8_t>(bits(32, 2));
        i.addr = b8(40);
        i.signal_slot = static_cast<uint8_t>(bits(48, 4));
        break;
    case PROT_REGION: i.size = static_cast<uint16_t>(bits(0, 16)); break;
    case PROGRESS_STORE: i.src = b8(40); break;
    case PROGRESS_LOAD: i.dst = b8(48); break;
    case HEAP_SET: i.addr = b8(40); break;
    case HEAP_OPERATION:
        i.wait_mask = static_cast<uint16_t>(bits(16, 16));
        i.heap_op = static_cast<uint8_t>(bits(32, 2));
        i.signal_slot = static_cast<uint8_t>(bits(48, 4));
        break;
    case TRACE_POINT:
        i.wait_mask = static_cast<uint16_t>(bits(16, 16));
        i.base = b8(32);
        i.count = b8(40);
        i.signal_slot = static_cast<uint8_t>(bits(48, 4));
        break;
    default: break;
    }
    return i;
}

inline const char* opcode_name(uint8_t op) {
    switch (op) {
    case NOP: return "NOP";
    case MOVE: return "MOVE";
    case MOVE32: return "MOVE32";
    case WAIT: return "WAIT";
    case RUN_COMPUTE: return "RUN_COMPUTE";
    case RUN_TILING: return "RUN_TILING";
    case RUN_IDVS: return "RUN_IDVS";
    case RUN_FRAGMENT: return "RUN_FRAGMENT";
    case RUN_FULLSCREEN: return "RUN_FULLSCREEN";
    case FINISH_TILING: return "FINISH_TILING";
    case FINISH_FRAGMENT: return "FINISH_FRAGMENT";
    case ADD_IMMEDIATE32: return "ADD_IMMEDIATE32";
    case ADD_IMMEDIATE64: return "ADD_IMMEDIATE64";
    case UMIN32: return "UMIN32";
    case LOAD_MULTIPLE: return "LOAD_MULTIPLE";
    case STORE_MULTIPLE: return "STORE_MULTIPLE";
    case BRANCH: return "BRANCH";
    case SET_SB_ENTRY: return "SET_SB_ENTRY";
    case PROGRESS_WAIT: return "PROGRESS_WAIT";
    case SET_EXCEPTION_HANDLER: return "SET_EXCEPTION_HANDLER";
    case CALL: return "CALL";
    case JUMP: return "JUMP";
    case REQ_RESOURCE: return "REQ_RESOURCE";
    case FLUSH_CACHE2: return "FLUSH_CACHE2";
    case SYNC_ADD32: return "SYNC_ADD32";
    case SYNC_SET32: return "SYNC_SET32";
    case SYNC_WAIT32: return "SYNC_WAIT32";
    case STORE_STATE: return "STORE_STATE";
    case PROT_REGION: return "PROT_REGION";
    case PROGRESS_STORE: return "PROGRESS_STORE";
    case PROGRESS_LOAD: return "PROGRESS_LOAD";
    case RUN_COMPUTE_INDIRECT: return "RUN_COMPUTE_INDIRECT";
    case ERROR_BARRIER: return "ERROR_BARRIER";
    case HEAP_SET: return "HEAP_SET";
    case HEAP_OPERATION: return "HEAP_OPERATION";
    case TRACE_POINT: return "TRACE_POINT";
    case SYNC_ADD64: return "SYNC_ADD64";
    case SYNC_SET64: return "SYNC_SET64";
    case SYNC_WAIT64: return "SYNC_WAIT64";
    default: return "INVALID";
    }
}

}  // namespace panthor::cs
