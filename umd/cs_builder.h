// Mirrors Mesa's src/panfrost/lib/genxml/cs_builder.h: a command-stream builder for v10 CSF.
//
// DOC: A Builder appends 64-bit instructions (encoded by hw/csf/cs_isa.h) to one buffer: its own
// (a vector) or a caller's memory such as a BO's CPU mapping, with the GPU VA the stream will run
// at. Mesa chains chunks with JUMPs when one fills up; here the buffer has a fixed capacity and
// running out of it is an error (-ENOSPC), like every other misuse: the first error sticks, later
// instructions are dropped, and finish() reports it, so emitters need no per-call checks.
//
// Registers are 32-bit r0..r(N-1); a 64-bit operand is the even pair rK:rK+1. The top
// `nr_kernel_registers` (csif_info.unpreserved_cs_reg_count, 4) belong to the kernel's ring-buffer
// code around the CALL into the user stream, so the builder refuses them (a stream that used them
// would still run, but the registers it relies on across a kernel-inserted sequence would not
// survive). Every emitter checks its operands, so a Reg32{95} made by hand fails the same way
// reg32(95) does.
//
// Control flow is BRANCH with a signed instruction offset relative to the next instruction.
// Labels take forward references and patch them when set; if/else and while loops sit on labels.
// The RUN_* instructions read their shader from staging registers (staging:: below); on the mock
// GPU the "shader" is a mock_hw::MockShader, and the set_* helpers put its GPU VA where the RUN
// reads it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hw/csf/cs_isa.h"
#include "hw/csf/mock_fw_formats.h"
#include "umd/result.h"

namespace umd::cs {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s16 = std::int16_t;
using s32 = std::int32_t;

using panthor::cs::Condition;
using panthor::cs::FlushMode;
using panthor::cs::HeapOp;
using panthor::cs::OtherFlushMode;
using panthor::cs::State;
using panthor::cs::SyncScope;
using panthor::cs::TaskAxis;

// cs_index: a 32-bit register or a 64-bit register pair.
struct Reg32 {
    u8 idx = 0;
};
struct Reg64 {
    u8 idx = 0;
    Reg32 lo() const { return Reg32{idx}; }
    Reg32 hi() const { return Reg32{static_cast<u8>(idx + 1)}; }
};

// The staging registers RUN_* read (docs/hw/csf/cs-isa.md; Mesa's decoder).
namespace staging {
constexpr u8 srt(u8 sel) {
    return static_cast<u8>(0 + 2 * sel);
}  // d0, d2, d4, d6
constexpr u8 fau(u8 sel) {
    return static_cast<u8>(8 + 2 * sel);
}  // d8 .. d14
constexpr u8 spd(u8 sel) {
    return static_cast<u8>(16 + 2 * sel);
}  // d16 .. d22: the shader
constexpr u8 tsd(u8 sel) {
    return static_cast<u8>(24 + 2 * sel);
}  // d24 .. d30
// Compute.
inline constexpr u8 kGlobalAttributeOffset = 32;
inline constexpr u8 kWorkgroupSize = 33;
inline constexpr u8 kJobOffsetX = 34;  // Y 35, Z 36
inline constexpr u8 kJobSizeX = 37;    // Y 38, Z 39
// Fragment: d40 FBD pointer (low 6 bits flags; the mock reads its shader at d40 & ~63).
inline constexpr u8 kFbd = 40;
inline constexpr u8 kBboxMin = 42;
inline constexpr u8 kBboxMax = 43;
// IDVS: position shader SPD d16, tiler context d40, ...
inline constexpr u8 kIdvsSpd = 16;
inline constexpr u8 kTilerContext = 40;
}  // namespace staging

// Builder limits; cs_config() in panthor_client.h fills it from DEV_QUERY CSIF_INFO.
struct Config {
    u32 nr_registers = 96;        // csif_info.cs_reg_count
    u32 nr_kernel_registers = 4;  // csif_info.unpreserved_cs_reg_count
    u32 nr_scoreboards = 8;       // csif_info.scoreboard_slot_count
};

// A branch target. Forward references wait in the label until set_label() patches them; a label
// is set once. Move-only: a copy would patch twice or never.
class Label {
public:
    Label() = default;
    Label(const Label&) = delete;
    Label& operator=(const Label&) = delete;
    Label(Label&&) = default;
    Label& operator=(Label&&) = default;

    bool is_set() const { return target_ >= 0; }
    // Instruction index the label points at (-1 while unset).
    long target() const { return target_; }

private:
    friend class Builder;
    long target_ = -1;
    std::vector<size_t> pending_;  // positions of BRANCHes waiting for the target
};

// RUN_COMPUTE / RUN_TILING / RUN_COMPUTE_INDIRECT resource selects (0..3: which of the four
// SRT/FAU/SPD/TSD staging pairs the job uses).
struct ShaderSel {
    u8 srt = 0, fau = 0, spd = 0, tsd = 0;
};

struct IdvsOptions {
    u32 flags_override = 0;
    bool progress_inc = false;
    bool malloc_enable = false;
    bool draw_id_enable = false;
    Reg32 draw_id{};
    // Select the alternate staging pair instead of the position shader's.
    bool varying_srt = false, varying_fau = false, varying_tsd = false;
    bool fragment_srt = false, fragment_tsd = false;
};

// SYNC_ADD/SET options. error_propagate: the object's status word records the stream's error state.
struct SyncOptions {
    SyncScope scope = panthor::cs::SCOPE_SYSTEM;
    bool error_propagate = true;
    u16 wait_mask = 0;
    u8 signal_slot = 0;
};

struct IfBlock {
    Label skip;  // the else branch, or the end when there is none
    Label end;
    bool has_else = false;
    u32 id = 0;
};

struct Loop {
    Label start;  // first instruction of the body
    Label cont;   // the condition re-check at the bottom
    Label end;
    Condition cond = panthor::cs::ALWAYS;
    Reg32 val{};
    u32 id = 0;
};

class Builder {
public:
    static constexpr size_t kDefaultCapacity = 16384;  // instructions (128 KiB)

    // Emits into an owned buffer of at most `capacity` instructions; gpu_va (0 if unknown) is
    // where the caller will copy it to.
    explicit Builder(Config cfg = {}, size_t capacity = kDefaultCapacity, u64 gpu_va = 0);
    // Emits straight into caller memory (a BO's CPU mapping) of `capacity_bytes`, which the GPU
    // sees at `gpu_va`.
    Builder(Config cfg, void* cpu, u64 gpu_va, size_t capacity_bytes);
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;

    const Config& config() const { return cfg_; }

    // ---- registers ----
    // The user-writable registers: r0 .. r(nr_registers - nr_kernel_registers - 1).
    u32 nr_user_registers() const { return cfg_.nr_registers - cfg_.nr_kernel_registers; }
    bool is_user_reg32(unsigned i) const { return i < nr_user_registers(); }
    bool is_user_reg64(unsigned i) const { return i % 2 == 0 && i + 1 < nr_user_registers(); }
    // Checked constructors: an invalid index sets -EINVAL.
    Reg32 reg32(unsigned i);
    Reg64 reg64(unsigned i);

    // ---- state and output ----
    bool ok() const { return error_ == 0; }
    // The first error: -ENOSPC (capacity), -EINVAL (operand, label or block misuse), -ERANGE
    // (branch too far); 0 if none.
    int error() const { return error_; }
    const std::string& error_message() const { return error_msg_; }
    size_t size() const { return size_; }  // instructions
    size_t size_bytes() const { return size_ * sizeof(u64); }
    size_t capacity() const { return capacity_; }
    u64 gpu_va() const { return gpu_va_; }
    u64 gpu_va_at(size_t instr) const { return gpu_va_ + instr * sizeof(u64); }
    const u64* data() const { return buf_; }
    std::span<const u64> instrs() const { return {buf_, size_}; }
    u64 at(size_t i) const { return buf_[i]; }
    // The error, or -EINVAL if a block is open or a forward reference was never resolved.
    Status finish();

    // ---- raw ----
    void emit(u64 instr);
    void nop();
    // NOPs up to a multiple of `instrs` instructions (8 = one 64-byte line, what panthor pads to).
    void pad_to(size_t instrs = 8);

    // ---- moves and arithmetic ----
    void move48(Reg64 dst, u64 imm48);  // imm must fit in 48 bits
    void move64(Reg64 dst, u64 imm);    // MOVE48, or two MOVE32 when the value needs 64 bits
    void move32(Reg32 dst, u32 imm);
    void add32(Reg32 dst, Reg32 src, s32 imm);
    void add64(Reg64 dst, Reg64 src, s32 imm);
    void umin32(Reg32 dst, Reg32 src0, Reg32 src1);

    // ---- loads and stores (32-bit words at d[addr] + offset + 4*i for each set mask bit i) ----
    void load_multiple(Reg32 base, u16 mask, Reg64 addr, s16 offset = 0);
    void store_multiple(Reg32 base, u16 mask, Reg64 addr, s16 offset = 0);
    void load32(Reg32 dst, Reg64 addr, s16 offset = 0) { load_multiple(dst, 0x1, addr, offset); }
    void load64(Reg64 dst, Reg64 addr, s16 offset = 0) { load_multiple(dst.lo(), 0x3, addr, offset); }
    void store32(Reg32 src, Reg64 addr, s16 offset = 0) { store_multiple(src, 0x1, addr, offset); }
    void store64(Reg64 src, Reg64 addr, s16 offset = 0) { store_multiple(src.lo(), 0x3, addr, offset); }

    // ---- scoreboards ----
    void wait(u16 sb_mask, bool progress_inc = false);
    void wait_slot(u8 slot) { wait(static_cast<u16>(1u << slot)); }
    void wait_all() { wait(all_slots()); }
    u16 all_slots() const { return static_cast<u16>((1u << cfg_.nr_scoreboards) - 1); }
    void set_sb_entry(u8 endpoint, u8 other);
    void req_resource(bool compute, bool fragment, bool tiler, bool idvs);

    // ---- jobs ----
    void run_compute(u16 task_increment = 1, TaskAxis axis = panthor::cs::AXIS_X, ShaderSel sel = {},
                     bool progress_inc = false);
    void run_compute_indirect(u16 wg_per_task, ShaderSel sel = {}, bool progress_inc = false);
    void run_tiling(ShaderSel sel = {}, u32 flags_override = 0, bool progress_inc = false);
    void run_idvs(const IdvsOptions& opts = {});
    void run_fragment(bool enable_tem = false, u8 tile_order = 0, bool progress_inc = false);
    void run_fullscreen(Reg64 dcd, u32 flags_override = 0, bool progress_inc = false);
    void finish_tiling(bool progress_inc = false);
    // Returns the heap chunks first..last (register pairs holding them) when first != 0.
    void finish_fragment(bool inc_frag_end, Reg64 last_chunk, Reg64 first_chunk, u16 wait_mask = 0, u8 signal_slot = 0);

    // Shader descriptors (a MockShader's GPU VA on the mock) into the register the RUN reads:
    // compute / tiling / compute-indirect: d(16 + 2*sel); IDVS: d16; fragment: d40 (the FBD,
    // 64-byte aligned, `flags` in its low 6 bits); fullscreen: the DCD pair it names.
    void set_spd(u64 shader_va, u8 spd_sel = 0);
    void set_idvs_shader(u64 shader_va) { set_spd(shader_va, 0); }
    void set_fbd(u64 fbd_va, u8 flags = 0);
    void set_dcd(Reg64 dcd, u64 shader_va) { move48(dcd, shader_va); }

    // ---- synchronisation objects ----
    void sync_add32(Reg64 addr, Reg32 val, SyncOptions o = {});
    void sync_set32(Reg64 addr, Reg32 val, SyncOptions o = {});
    void sync_add64(Reg64 addr, Reg64 val, SyncOptions o = {});
    void sync_set64(Reg64 addr, Reg64 val, SyncOptions o = {});
    // Blocks until mem <cond> ref. Only LEQUAL and GREATER: those are the conditions the firmware
    // reports in status_wait and panthor re-evaluates to wake a waiting group (as Mesa asserts).
    void sync_wait32(Reg64 addr, Reg32 ref, Condition cond, bool error_reject = false);
    void sync_wait64(Reg64 addr, Reg64 ref, Condition cond, bool error_reject = false);

    // ---- calls, heap, caches, state ----
    void call(Reg64 addr, Reg32 length);
    void jump(Reg64 addr, Reg32 length);
    // MOVE48 addr_reg <- va, MOVE32 len_reg <- size, CALL (size a multiple of 8).
    void call_buffer(Reg64 addr_reg, Reg32 len_reg, u64 va, u32 size_bytes);
    void heap_set(Reg64 ctx);
    void heap_operation(HeapOp op, u16 wait_mask = 0, u8 signal_slot = 0);
    void flush_cache2(FlushMode l2, FlushMode lsc, OtherFlushMode other, Reg32 flush_id, u16 wait_mask = 0,
                      u8 signal_slot = 0);
    void store_state(Reg64 addr, State state, s16 offset = 0, u16 wait_mask = 0, u8 signal_slot = 0);
    void error_barrier();
    void set_exception_handler(u8 exception, Reg64 addr, Reg32 length);

    // ---- control flow ----
    // BRANCH to `l` when cond(int32 val vs 0) holds (ALWAYS: unconditionally; val is then unused).
    void branch(Label& l, Condition cond = panthor::cs::ALWAYS, Reg32 val = {});
    void set_label(Label& l);

    // if (cond(val)) { ... } [else { ...}]: a BRANCH on the inverted condition skips the body.
    IfBlock begin_if(Condition cond, Reg32 val);
    void begin_else(IfBlock& b);
    void end_if(IfBlock& b);
    template <class Then>
    void if_(Condition cond, Reg32 val, Then&& then) {
        IfBlock b = begin_if(cond, val);
        then();
        end_if(b);
    }
    template <class Then, class Else>
    void if_else(Condition cond, Reg32 val, Then&& then, Else&& otherwise) {
        IfBlock b = begin_if(cond, val);
        then();
        begin_else(b);
        otherwise();
        end_if(b);
    }

    // while (cond(val)) { ... }: checked before the first iteration and at the bottom of each.
    Loop begin_while(Condition cond, Reg32 val);
    void loop_break(Loop& l, Condition cond = panthor::cs::ALWAYS, Reg32 val = {}) { branch(l.end, cond, val); }
    void loop_continue(Loop& l, Condition cond = panthor::cs::ALWAYS, Reg32 val = {}) { branch(l.cont, cond, val); }
    void end_while(Loop& l);
    // body(Loop&) may call loop_break / loop_continue.
    template <class Body>
    void while_(Condition cond, Reg32 val, Body&& body) {
        Loop l = begin_while(cond, val);
        body(l);
        end_while(l);
    }

    // The condition that holds exactly when `c` does not (ALWAYS has none: returns ALWAYS).
    static Condition invert(Condition c);

private:
    bool fail(int err, const char* what);
    bool check32(Reg32 r, const char* what);
    bool check64(Reg64 r, const char* what);
    bool check_mask(u16 mask, const char* what);
    bool check_slot(u8 slot, const char* what);
    bool check_sel(ShaderSel s, const char* what);
    void sync_op(u64 (*enc)(u8, u8, SyncScope, bool, u16, u8), Reg64 addr, u8 val, SyncOptions o, const char* what);
    void patch_branch(size_t pos, long target);
    void push_block(u32 id) { blocks_.push_back(id); }
    bool pop_block(u32 id, const char* what);

    Config cfg_;
    std::vector<u64> owned_;
    u64* buf_ = nullptr;
    size_t capacity_ = 0;
    size_t size_ = 0;
    u64 gpu_va_ = 0;
    int error_ = 0;
    std::string error_msg_;
    long unresolved_ = 0;      // forward references not yet patched
    std::vector<u32> blocks_;  // open if/while blocks, innermost last
    u32 next_block_id_ = 1;
};

// MockShader descriptors for the common cases (write them to GPU-visible memory, 64-byte aligned,
// and point the RUN's staging register at them).
namespace mock {
inline mock_hw::MockShader run(u64 duration_ns) {
    mock_hw::MockShader s;
    s.kind = mock_hw::MockShader::Run;
    s.duration_ns = duration_ns;
    return s;
}
// Runs `duration_ns`, then writes the 64-bit `value` at GPU VA `addr`.
inline mock_hw::MockShader write(u64 addr, u64 value, u64 duration_ns = 0) {
    mock_hw::MockShader s;
    s.kind = mock_hw::MockShader::Write;
    s.duration_ns = duration_ns;
    s.addr = addr;
    s.value = value;
    return s;
}
inline mock_hw::MockShader hang() {
    mock_hw::MockShader s;
    s.kind = mock_hw::MockShader::Hang;
    return s;
}
}  // namespace mock

}  // namespace umd::cs
