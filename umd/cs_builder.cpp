// Mirrors Mesa's src/panfrost/lib/genxml/cs_builder.h (the emitters, labels and control flow).
#include "umd/cs_builder.h"

#include <cerrno>
#include <cstring>

namespace umd::cs {

namespace isa = panthor::cs;

Builder::Builder(Config cfg, size_t capacity, u64 gpu_va)
    : cfg_(cfg), owned_(capacity), buf_(owned_.data()), capacity_(capacity), gpu_va_(gpu_va) {}

Builder::Builder(Config cfg, void* cpu, u64 gpu_va, size_t capacity_bytes)
    : cfg_(cfg), buf_(static_cast<u64*>(cpu)), capacity_(cpu ? capacity_bytes / sizeof(u64) : 0), gpu_va_(gpu_va) {}

bool Builder::fail(int err, const char* what) {
    if (error_ == 0) {
        error_ = err;
        error_msg_ = what;
    }
    return false;
}

Status Builder::finish() {
    if (error_)
        return err(error_);
    if (!blocks_.empty()) {
        fail(-EINVAL, "finish: an if/while block is still open");
        return err(error_);
    }
    if (unresolved_) {
        fail(-EINVAL, "finish: a forward branch targets a label that was never set");
        return err(error_);
    }
    return {};
}

// ---- registers ----

Reg32 Builder::reg32(unsigned i) {
    if (!is_user_reg32(i))
        fail(-EINVAL, "reg32: index out of the user registers");
    return Reg32{static_cast<u8>(i)};
}

Reg64 Builder::reg64(unsigned i) {
    if (!is_user_reg64(i))
        fail(-EINVAL, "reg64: odd index or out of the user registers");
    return Reg64{static_cast<u8>(i)};
}

bool Builder::check32(Reg32 r, const char* what) {
    return is_user_reg32(r.idx) || fail(-EINVAL, what);
}
bool Builder::check64(Reg64 r, const char* what) {
    return is_user_reg64(r.idx) || fail(-EINVAL, what);
}

bool Builder::check_mask(u16 mask, const char* what) {
    return (mask >> cfg_.nr_scoreboards) == 0 || fail(-EINVAL, what);
}

bool Builder::check_slot(u8 slot, const char* what) {
    return slot < cfg_.nr_scoreboards || fail(-EINVAL, what);
}

bool Builder::check_sel(ShaderSel s, const char* what) {
    return (s.srt | s.fau | s.spd | s.tsd) < 4 || fail(-EINVAL, what);
}

// ---- raw ----

void Builder::emit(u64 instr) {
    if (error_)
        return;
    if (size_ >= capacity_) {
        fail(-ENOSPC, "command stream buffer full");
        return;
    }
    // memcpy: the buffer may be a caller's BO mapping with no u64 alignment guarantee to rely on.
    std::memcpy(&buf_[size_], &instr, sizeof(instr));
    size_++;
}

void Builder::nop() {
    emit(isa::nop());
}

void Builder::pad_to(size_t instrs) {
    if (instrs == 0) {
        fail(-EINVAL, "pad_to: zero alignment");
        return;
    }
    while (ok() && size_ % instrs)
        nop();
}

// ---- moves and arithmetic ----

void Builder::move48(Reg64 dst, u64 imm48) {
    if (!check64(dst, "MOVE48: bad destination pair"))
        return;
    if (imm48 >> 48) {
        fail(-EINVAL, "MOVE48: immediate wider than 48 bits");
        return;
    }
    emit(isa::move48(dst.idx, imm48));
}

void Builder::move64(Reg64 dst, u64 imm) {
    if (!check64(dst, "MOVE64: bad destination pair"))
        return;
    if (imm >> 48) {
        emit(isa::move32(dst.idx, static_cast<u32>(imm)));
        emit(isa::move32(static_cast<u8>(dst.idx + 1), static_cast<u32>(imm >> 32)));
    } else {
        emit(isa::move48(dst.idx, imm));
    }
}

void Builder::move32(Reg32 dst, u32 imm) {
    if (check32(dst, "MOVE32: bad destination"))
        emit(isa::move32(dst.idx, imm));
}

void Builder::add32(Reg32 dst, Reg32 src, s32 imm) {
    if (check32(dst, "ADD_IMMEDIATE32: bad destination") && check32(src, "ADD_IMMEDIATE32: bad source"))
        emit(isa::add_imm32(dst.idx, src.idx, imm));
}

void Builder::add64(Reg64 dst, Reg64 src, s32 imm) {
    if (check64(dst, "ADD_IMMEDIATE64: bad destination pair") && check64(src, "ADD_IMMEDIATE64: bad source pair"))
        emit(isa::add_imm64(dst.idx, src.idx, imm));
}

void Builder::umin32(Reg32 dst, Reg32 src0, Reg32 src1) {
    if (check32(dst, "UMIN32: bad destination") && check32(src0, "UMIN32: bad source 0") &&
        check32(src1, "UMIN32: bad source 1"))
        emit(isa::umin32(dst.idx, src0.idx, src1.idx));
}

// ---- loads and stores ----

void Builder::load_multiple(Reg32 base, u16 mask, Reg64 addr, s16 offset) {
    if (!check64(addr, "LOAD_MULTIPLE: bad address pair"))
        return;
    if (mask == 0) {
        fail(-EINVAL, "LOAD_MULTIPLE: empty register mask");
        return;
    }
    for (unsigned i = 0; i < 16; i++)
        if ((mask & (1u << i)) && !is_user_reg32(base.idx + i)) {
            fail(-EINVAL, "LOAD_MULTIPLE: a destination register is out of the user registers");
            return;
        }
    emit(isa::load_multiple(base.idx, addr.idx, mask, offset));
}

void Builder::store_multiple(Reg32 base, u16 mask, Reg64 addr, s16 offset) {
    if (!check64(addr, "STORE_MULTIPLE: bad address pair"))
        return;
    if (mask == 0) {
        fail(-EINVAL, "STORE_MULTIPLE: empty register mask");
        return;
    }
    for (unsigned i = 0; i < 16; i++)
        if ((mask & (1u << i)) && !is_user_reg32(base.idx + i)) {
            fail(-EINVAL, "STORE_MULTIPLE: a source register is out of the user registers");
            return;
        }
    emit(isa::store_multiple(base.idx, addr.idx, mask, offset));
}

// ---- scoreboards ----

void Builder::wait(u16 sb_mask, bool progress_inc) {
    // The v10 WAIT mask field is 8 bits wide.
    if (check_mask(sb_mask, "WAIT: mask names a scoreboard entry that does not exist") &&
        ((sb_mask >> 8) == 0 || fail(-EINVAL, "WAIT: mask wider than the 8-bit field")))
        emit(isa::wait(sb_mask, progress_inc));
}

void Builder::set_sb_entry(u8 endpoint, u8 other) {
    if (check_slot(endpoint, "SET_SB_ENTRY: endpoint entry out of range") &&
        check_slot(other, "SET_SB_ENTRY: other entry out of range"))
        emit(isa::set_sb_entry(endpoint, other));
}

void Builder::req_resource(bool compute, bool fragment, bool tiler, bool idvs) {
    emit(isa::req_resource(compute, fragment, tiler, idvs));
}

// ---- jobs ----

void Builder::run_compute(u16 task_increment, TaskAxis axis, ShaderSel sel, bool progress_inc) {
    if (!check_sel(sel, "RUN_COMPUTE: resource select > 3"))
        return;
    if (task_increment >> 14 || axis > isa::AXIS_Z) {
        fail(-EINVAL, "RUN_COMPUTE: task increment wider than 14 bits or bad axis");
        return;
    }
    emit(isa::run_compute(task_increment, axis, progress_inc, sel.srt, sel.spd, sel.tsd, sel.fau));
}

void Builder::run_compute_indirect(u16 wg_per_task, ShaderSel sel, bool progress_inc) {
    if (check_sel(sel, "RUN_COMPUTE_INDIRECT: resource select > 3"))
        emit(isa::run_compute_indirect(wg_per_task, progress_inc, sel.srt, sel.spd, sel.tsd, sel.fau));
}

void Builder::run_tiling(ShaderSel sel, u32 flags_override, bool progress_inc) {
    if (check_sel(sel, "RUN_TILING: resource select > 3"))
        emit(isa::run_tiling(flags_override, progress_inc, sel.srt, sel.spd, sel.tsd, sel.fau));
}

void Builder::run_idvs(const IdvsOptions& o) {
    if (o.draw_id_enable && !check32(o.draw_id, "RUN_IDVS: bad draw-id register"))
        return;
    const u8 sel = static_cast<u8>(o.varying_srt | o.varying_fau << 1 | o.varying_tsd << 2 | o.fragment_srt << 3 |
                                   o.fragment_tsd << 4);
    emit(isa::run_idvs(o.flags_override, o.progress_inc, o.malloc_enable, o.draw_id_enable,
                       o.draw_id_enable ? o.draw_id.idx : 0, sel));
}

void Builder::run_fragment(bool enable_tem, u8 tile_order, bool progress_inc) {
    if (tile_order >= 16) {
        fail(-EINVAL, "RUN_FRAGMENT: tile order wider than 4 bits");
        return;
    }
    emit(isa::run_fragment(enable_tem, tile_order, progress_inc));
}

void Builder::run_fullscreen(Reg64 dcd, u32 flags_override, bool progress_inc) {
    if (check64(dcd, "RUN_FULLSCREEN: bad DCD pair"))
        emit(isa::run_fullscreen(flags_override, dcd.idx, progress_inc));
}

void Builder::finish_tiling(bool progress_inc) {
    emit(isa::finish_tiling(progress_inc));
}

void Builder::finish_fragment(bool inc_frag_end, Reg64 last_chunk, Reg64 first_chunk, u16 wait_mask, u8 signal_slot) {
    if (check64(last_chunk, "FINISH_FRAGMENT: bad last-chunk pair") &&
        check64(first_chunk, "FINISH_FRAGMENT: bad first-chunk pair") &&
        check_mask(wait_mask, "FINISH_FRAGMENT: wait mask names a missing scoreboard entry") &&
        check_slot(signal_slot, "FINISH_FRAGMENT: signal slot out of range"))
        emit(isa::finish_fragment(inc_frag_end, wait_mask, last_chunk.idx, first_chunk.idx, signal_slot));
}

void Builder::set_spd(u64 shader_va, u8 spd_sel) {
    if (spd_sel > 3) {
        fail(-EINVAL, "set_spd: select > 3");
        return;
    }
    move48(Reg64{staging::spd(spd_sel)}, shader_va);
}

void Builder::set_fbd(u64 fbd_va, u8 flags) {
    if (fbd_va & 63 || flags >= 64) {
        fail(-EINVAL, "set_fbd: FBD not 64-byte aligned or flags wider than 6 bits");
        return;
    }
    move48(Reg64{staging::kFbd}, fbd_va | flags);
}

// ---- synchronisation objects ----

void Builder::sync_op(u64 (*enc)(u8, u8, SyncScope, bool, u16, u8), Reg64 addr, u8 val, SyncOptions o,
                      const char* what) {
    if (!check64(addr, what) || !check_mask(o.wait_mask, what) || !check_slot(o.signal_slot, what))
        return;
    if (o.scope != isa::SCOPE_SYSTEM && o.scope != isa::SCOPE_CSG) {
        fail(-EINVAL, what);
        return;
    }
    emit(enc(addr.idx, val, o.scope, o.error_propagate, o.wait_mask, o.signal_slot));
}

void Builder::sync_add32(Reg64 addr, Reg32 val, SyncOptions o) {
    if (check32(val, "SYNC_ADD32: bad value register"))
        sync_op(isa::sync_add32, addr, val.idx, o, "SYNC_ADD32: bad address pair, scope, mask or slot");
}

void Builder::sync_set32(Reg64 addr, Reg32 val, SyncOptions o) {
    if (check32(val, "SYNC_SET32: bad value register"))
        sync_op(isa::sync_set32, addr, val.idx, o, "SYNC_SET32: bad address pair, scope, mask or slot");
}

void Builder::sync_add64(Reg64 addr, Reg64 val, SyncOptions o) {
    if (check64(val, "SYNC_ADD64: bad value pair"))
        sync_op(isa::sync_add64, addr, val.idx, o, "SYNC_ADD64: bad address pair, scope, mask or slot");
}

void Builder::sync_set64(Reg64 addr, Reg64 val, SyncOptions o) {
    if (check64(val, "SYNC_SET64: bad value pair"))
        sync_op(isa::sync_set64, addr, val.idx, o, "SYNC_SET64: bad address pair, scope, mask or slot");
}

void Builder::sync_wait32(Reg64 addr, Reg32 ref, Condition cond, bool error_reject) {
    if (!check64(addr, "SYNC_WAIT32: bad address pair") || !check32(ref, "SYNC_WAIT32: bad reference register"))
        return;
    if (cond != isa::LEQUAL && cond != isa::GREATER) {
        fail(-EINVAL, "SYNC_WAIT32: only LEQUAL and GREATER");
        return;
    }
    emit(isa::sync_wait32(addr.idx, ref.idx, cond, error_reject));
}

void Builder::sync_wait64(Reg64 addr, Reg64 ref, Condition cond, bool error_reject) {
    if (!check64(addr, "SYNC_WAIT64: bad address pair") || !check64(ref, "SYNC_WAIT64: bad reference pair"))
        return;
    if (cond != isa::LEQUAL && cond != isa::GREATER) {
        fail(-EINVAL, "SYNC_WAIT64: only LEQUAL and GREATER");
        return;
    }
    emit(isa::sync_wait64(addr.idx, ref.idx, cond, error_reject));
}

// ---- calls, heap, caches, state ----

void Builder::call(Reg64 addr, Reg32 length) {
    if (check64(addr, "CALL: bad address pair") && check32(length, "CALL: bad length register"))
        emit(isa::call(addr.idx, length.idx));
}

void Builder::jump(Reg64 addr, Reg32 length) {
    if (check64(addr, "JUMP: bad address pair") && check32(length, "JUMP: bad length register"))
        emit(isa::jump(addr.idx, length.idx));
}

void Builder::call_buffer(Reg64 addr_reg, Reg32 len_reg, u64 va, u32 size_bytes) {
    if (size_bytes % 8) {
        fail(-EINVAL, "call_buffer: size not a multiple of 8");
        return;
    }
    move48(addr_reg, va);
    move32(len_reg, size_bytes);
    call(addr_reg, len_reg);
}

void Builder::heap_set(Reg64 ctx) {
    if (check64(ctx, "HEAP_SET: bad address pair"))
        emit(isa::heap_set(ctx.idx));
}

void Builder::heap_operation(HeapOp op, u16 wait_mask, u8 signal_slot) {
    if (op != isa::HEAP_VT_START && op != isa::HEAP_VT_END && op != isa::HEAP_FRAG_END) {
        fail(-EINVAL, "HEAP_OPERATION: unknown operation");
        return;
    }
    if (check_mask(wait_mask, "HEAP_OPERATION: wait mask names a missing scoreboard entry") &&
        check_slot(signal_slot, "HEAP_OPERATION: signal slot out of range"))
        emit(isa::heap_operation(op, wait_mask, signal_slot));
}

void Builder::flush_cache2(FlushMode l2, FlushMode lsc, OtherFlushMode other, Reg32 flush_id, u16 wait_mask,
                           u8 signal_slot) {
    auto mode_ok = [](FlushMode m) {
        return m == isa::FLUSH_NONE || m == isa::FLUSH_CLEAN || m == isa::FLUSH_CLEAN_INVALIDATE;
    };
    if (!mode_ok(l2) || !mode_ok(lsc) || (other != isa::OTHER_FLUSH_NONE && other != isa::OTHER_FLUSH_INVALIDATE)) {
        fail(-EINVAL, "FLUSH_CACHE2: unknown flush mode");
        return;
    }
    if (check32(flush_id, "FLUSH_CACHE2: bad flush-ID register") &&
        check_mask(wait_mask, "FLUSH_CACHE2: wait mask names a missing scoreboard entry") &&
        check_slot(signal_slot, "FLUSH_CACHE2: signal slot out of range"))
        emit(isa::flush_cache2(l2, lsc, other, flush_id.idx, wait_mask, signal_slot));
}

void Builder::store_state(Reg64 addr, State state, s16 offset, u16 wait_mask, u8 signal_slot) {
    if (state > isa::STATE_ERROR_STATUS) {
        fail(-EINVAL, "STORE_STATE: unknown state");
        return;
    }
    if (check64(addr, "STORE_STATE: bad address pair") &&
        check_mask(wait_mask, "STORE_STATE: wait mask names a missing scoreboard entry") &&
        check_slot(signal_slot, "STORE_STATE: signal slot out of range"))
        emit(isa::store_state(addr.idx, state, offset, wait_mask, signal_slot));
}

void Builder::error_barrier() {
    emit(isa::error_barrier());
}

void Builder::set_exception_handler(u8 exception, Reg64 addr, Reg32 length) {
    if (check64(addr, "SET_EXCEPTION_HANDLER: bad address pair") &&
        check32(length, "SET_EXCEPTION_HANDLER: bad length register"))
        emit(isa::set_exception_handler(exception, addr.idx, length.idx));
}

// ---- control flow ----

Condition Builder::invert(Condition c) {
    switch (c) {
    case isa::LEQUAL: return isa::GREATER;
    case isa::GREATER: return isa::LEQUAL;
    case isa::EQUAL: return isa::NEQUAL;
    case isa::NEQUAL: return isa::EQUAL;
    case isa::LESS: return isa::GEQUAL;
    case isa::GEQUAL: return isa::LESS;
    default: return isa::ALWAYS;
    }
}

// The offset counts instructions from the one after the BRANCH.
void Builder::patch_branch(size_t pos, long target) {
    const long off = target - static_cast<long>(pos + 1);
    if (off < INT16_MIN || off > INT16_MAX) {
        fail(-ERANGE, "BRANCH: target further than a signed 16-bit offset");
        return;
    }
    const isa::Instr old = isa::decode(buf_[pos]);
    const u64 raw = isa::branch(static_cast<Condition>(old.cond), old.src, static_cast<s16>(off));
    std::memcpy(&buf_[pos], &raw, sizeof(raw));
}

void Builder::branch(Label& l, Condition cond, Reg32 val) {
    if (cond > isa::ALWAYS) {
        fail(-EINVAL, "BRANCH: unknown condition");
        return;
    }
    if (cond == isa::ALWAYS)
        val = Reg32{0};
    else if (!check32(val, "BRANCH: bad value register"))
        return;
    const size_t pos = size_;
    emit(isa::branch(cond, val.idx, 0));
    if (!ok())
        return;
    if (l.is_set()) {
        patch_branch(pos, l.target_);
    } else {
        l.pending_.push_back(pos);
        unresolved_++;
    }
}

void Builder::set_label(Label& l) {
    if (l.is_set()) {
        fail(-EINVAL, "set_label: label already set");
        return;
    }
    l.target_ = static_cast<long>(size_);
    for (size_t pos : l.pending_) {
        unresolved_--;
        if (ok())
            patch_branch(pos, l.target_);
    }
    l.pending_.clear();
}

bool Builder::pop_block(u32 id, const char* what) {
    if (blocks_.empty() || blocks_.back() != id)
        return fail(-EINVAL, what);
    blocks_.pop_back();
    return true;
}

IfBlock Builder::begin_if(Condition cond, Reg32 val) {
    IfBlock b;
    b.id = next_block_id_++;
    push_block(b.id);
    // ALWAYS: the body always runs, nothing to skip it with.
    if (cond != isa::ALWAYS)
        branch(b.skip, invert(cond), val);
    return b;
}

void Builder::begin_else(IfBlock& b) {
    if (b.has_else || blocks_.empty() || blocks_.back() != b.id) {
        fail(-EINVAL, "begin_else: not in the innermost if, or a second else");
        return;
    }
    b.has_else = true;
    branch(b.end);
    set_label(b.skip);
}

void Builder::end_if(IfBlock& b) {
    if (!pop_block(b.id, "end_if: not the innermost open block"))
        return;
    set_label(b.has_else ? b.end : b.skip);
}

Loop Builder::begin_while(Condition cond, Reg32 val) {
    Loop l;
    l.id = next_block_id_++;
    l.cond = cond;
    l.val = val;
    push_block(l.id);
    if (cond != isa::ALWAYS)
        branch(l.end, invert(cond), val);
    set_label(l.start);
    return l;
}

void Builder::end_while(Loop& l) {
    if (!pop_block(l.id, "end_while: not the innermost open block"))
        return;
    set_label(l.cont);
    branch(l.start, l.cond, l.val);
    set_label(l.end);
}

}  // namespace umd::cs
