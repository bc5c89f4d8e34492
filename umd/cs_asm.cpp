// The command-stream text assembler (cs_asm.h): the inverse of cs_disasm for the instructions it
// knows, plus the short spellings of the scenario format. (No upstream counterpart.)
#include "umd/cs_asm.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "hw/csf/cs_isa.h"

namespace umd::cs {
namespace {

namespace isa = panthor::cs;
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

constexpr u64 kImm48Max = (u64{1} << 48) - 1;
constexpr u64 kNopPayloadMax = (u64{1} << 56) - 1;

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

std::string upper(std::string_view s) {
    std::string u(s);
    std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return u;
}

// A non-negative integer: decimal or 0x hex (strtoull's base 0).
std::optional<u64> parse_unsigned(std::string_view s) {
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])))
        return std::nullopt;
    std::string t(s);
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 0);
    if (errno || *end)
        return std::nullopt;
    return static_cast<u64>(v);
}

struct Token {
    std::string_view text;
    u32 col = 0;
};

struct Shape {
    AsmOp op;
    const char* canonical;  // the disassembler's mnemonic
    const char* short_name;
    size_t min, max;  // positional operands
    const char* syntax;
};

constexpr Shape kShapes[] = {
    {AsmOp::Nop, "NOP", "NOP", 0, 1, "NOP [#payload]"},
    {AsmOp::Move48, "MOVE", "MOVE48", 2, 2, "MOVE dN, #imm48 or MOVE48 dN, imm48|@symbol[+offset]"},
    {AsmOp::Move32, "MOVE32", "MOVE32", 2, 2, "MOVE32 rN, imm32"},
    {AsmOp::AddImm32, "ADD_IMMEDIATE32", "ADD_IMM32", 3, 3, "ADD_IMM32 rD, rS, imm32"},
    {AsmOp::Load, "LOAD_MULTIPLE", "LOAD", 2, 3, "LOAD rD|dD, dA[, offset] or LOAD_MULTIPLE rB, [dA + offset], mask=M"},
    {AsmOp::Store, "STORE_MULTIPLE", "STORE", 2, 3,
     "STORE rS|dS, dA[, offset] or STORE_MULTIPLE rB, [dA + offset], mask=M"},
    {AsmOp::Wait, "WAIT", "WAIT", 0, 1, "WAIT mask|all or WAIT[.progress] wait=M"},
    {AsmOp::SyncAdd64, "SYNC_ADD64", "SYNC_ADD64", 2, 2,
     "SYNC_ADD64 dAddr, dValue or SYNC_ADD64.system|.csg[.propagate] [dAddr], dValue wait=M signal=sbN"},
    {AsmOp::SyncWait64, "SYNC_WAIT64", "SYNC_WAIT64", 2, 3,
     "SYNC_WAIT64 dAddr, dRef, le|gt or SYNC_WAIT64.le|.gt[.reject] [dAddr], dRef"},
};

// One line's parse; errors go to `errors`, the instruction (if any and good) to `out`.
class LineParser {
public:
    LineParser(const AsmOptions& o, u32 line, std::vector<AsmError>* errors) : opts_(o), line_(line), errors_(errors) {}

    bool fail(u32 col, std::string msg) {
        errors_->push_back({line_, col, std::move(msg)});
        return false;
    }

    // Strips the comment: a '#' not directly followed by a digit or a sign.
    static std::string_view strip_comment(std::string_view t) {
        for (size_t i = 0; i < t.size(); i++) {
            if (t[i] != '#')
                continue;
            const char n = i + 1 < t.size() ? t[i + 1] : '\0';
            if (!std::isdigit(static_cast<unsigned char>(n)) && n != '-' && n != '+')
                return t.substr(0, i);
        }
        return t;
    }

    // Returns false on an error; `*out` is set when the line holds an instruction.
    bool parse(std::string_view text, std::optional<AsmInstr>* out) {
        const std::string_view t = strip_comment(text);
        size_t i = 0;
        while (i < t.size() && is_blank(t[i]))
            i++;
        if (i == t.size())
            return true;
        size_t start = i;
        while (i < t.size() && !is_blank(t[i]))
            i++;
        mnem_ = {t.substr(start, i - start), col(start)};
        // Operands: comma-separated pieces, each split at blanks outside brackets.
        std::vector<Token> toks;
        while (i < t.size() && is_blank(t[i]))
            i++;
        if (i < t.size()) {
            for (;;) {
                size_t end = i;
                int depth = 0;
                while (end < t.size() && (t[end] != ',' || depth > 0)) {
                    depth += t[end] == '[' ? 1 : t[end] == ']' ? -1 : 0;
                    end++;
                }
                bool any = false;
                for (size_t k = i; k < end;) {
                    while (k < end && is_blank(t[k]))
                        k++;
                    if (k == end)
                        break;
                    size_t s = k;
                    int d = 0;
                    while (k < end && (d > 0 || !is_blank(t[k]))) {
                        d += t[k] == '[' ? 1 : t[k] == ']' ? -1 : 0;
                        k++;
                    }
                    toks.push_back({t.substr(s, k - s), col(s)});
                    any = true;
                }
                if (!any)
                    return fail(col(i), "empty operand (expected an operand between the commas)");
                if (end == t.size())
                    break;
                i = end + 1;
            }
        }
        // Mnemonic and its dotted modifiers.
        const std::string m = upper(mnem_.text);
        const std::string base = m.substr(0, m.find('.'));
        const Shape* shape = nullptr;
        for (const Shape& s : kShapes)
            if (base == s.canonical || base == s.short_name)
                shape = &s;
        if (!shape)
            return fail(mnem_.col,
                        "unknown instruction '" + std::string(mnem_.text) +
                            "' (expected one of: NOP, MOVE48, MOVE32, ADD_IMM32, LOAD, STORE, WAIT, SYNC_ADD64, "
                            "SYNC_WAIT64, or the disassembler's MOVE, ADD_IMMEDIATE32, LOAD_MULTIPLE, "
                            "STORE_MULTIPLE)");
        shape_ = shape;
        name_ = base;
        for (size_t p = m.find('.'); p != std::string::npos;) {
            const size_t q = m.find('.', p + 1);
            mods_.push_back({std::string_view(mnem_.text).substr(p + 1, q == std::string::npos ? q : q - p - 1),
                             mnem_.col + static_cast<u32>(p)});
            p = q;
        }
        for (const Token& k : toks) {
            if (k.text.find('=') != std::string_view::npos && k.text[0] != '@' && k.text[0] != '[')
                named_.push_back(k);
            else
                pos_.push_back(k);
        }
        if (pos_.size() > shape->max)
            return fail(pos_[shape->max].col, "unexpected '" + std::string(pos_[shape->max].text) +
                                                  "' after the operands of " + name_ + " (expected " + shape->syntax +
                                                  ")");
        AsmInstr in;
        in.op = shape->op;
        in.line = line_;
        in.column = mnem_.col;
        if (!operands(in))
            return false;
        *out = std::move(in);
        return true;
    }

private:
    u32 col(size_t i) const { return static_cast<u32>(i) + 1; }

    bool count(size_t n) {
        if (pos_.size() >= n)
            return true;
        std::string takes = shape_->min == shape_->max || n == shape_->max
                                ? std::to_string(n)
                                : std::to_string(shape_->min) + " or " + std::to_string(shape_->max);
        return fail(mnem_.col, name_ + " takes " + takes + " operands, got " + std::to_string(pos_.size()) +
                                   " (expected " + shape_->syntax + ")");
    }

    // Modifiers of the mnemonic, each from `allowed` (upper case); returns the ones present.
    bool modifiers(std::initializer_list<const char*> allowed, std::vector<std::string>* present) {
        for (const Token& k : mods_) {
            const std::string u = upper(k.text);
            if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return u == a; })) {
                std::string list;
                for (const char* a : allowed) {
                    std::string l = upper(a);
                    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
                    list += (list.empty() ? "." : ", .") + l;
                }
                return fail(k.col, "unknown modifier '." + std::string(k.text) + "' of " + name_ + " (expected " +
                                       (list.empty() ? std::string("none") : list) + ")");
            }
            present->push_back(u);
        }
        return true;
    }

    // A named operand `key=value`: its value, or nullopt when absent (an unknown key is an error).
    bool named(std::initializer_list<const char*> allowed, std::vector<std::pair<std::string, Token>>* out) {
        for (const Token& k : named_) {
            const size_t eq = k.text.find('=');
            const std::string key = upper(k.text.substr(0, eq));
            if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == upper(a); }))
                return fail(k.col, "unexpected '" + std::string(k.text) + "' in " + name_ + " (expected " +
                                       shape_->syntax + ")");
            out->push_back({key, Token{k.text.substr(eq + 1), k.col + static_cast<u32>(eq) + 1}});
        }
        return true;
    }

    // 'r' (32-bit), 'd' (64-bit pair, even index) or '*' (either).
    bool reg(const Token& k, char kind, u8* out, bool* wide = nullptr) {
        const char c = k.text.empty() ? '\0' : k.text[0];
        const bool ok_kind = c == kind || (kind == '*' && (c == 'r' || c == 'd'));
        const std::optional<u64> idx = k.text.size() > 1 ? parse_unsigned(k.text.substr(1)) : std::nullopt;
        const bool is64 = c == 'd';
        const u64 n = opts_.regs;
        const bool valid = ok_kind && idx && (is64 ? (*idx % 2 == 0 && *idx + 1 < n) : *idx < n);
        if (!valid) {
            const std::string r = "a register r0..r" + std::to_string(n - 1);
            const std::string d = "a 64-bit register d0, d2 .. d" + std::to_string(n - 2);
            return fail(k.col, "bad register '" + std::string(k.text) + "' (expected " +
                                   (kind == 'r'   ? r
                                    : kind == 'd' ? d
                                                  : r + " or " + d.substr(2)) +
                                   ")");
        }
        *out = static_cast<u8>(*idx);
        if (wide)
            *wide = is64;
        return true;
    }

    // An integer in [lo, hi], with an optional '#' and sign.
    bool imm(const Token& k, s64 lo, s64 hi, s64* out) {
        std::string_view v = k.text;
        if (!v.empty() && v[0] == '#')
            v.remove_prefix(1);
        const bool neg = !v.empty() && v[0] == '-';
        if (!v.empty() && (v[0] == '-' || v[0] == '+'))
            v.remove_prefix(1);
        const std::optional<u64> u = parse_unsigned(v);
        if (u && *u <= static_cast<u64>(INT64_MAX)) {
            const s64 x = neg ? -static_cast<s64>(*u) : static_cast<s64>(*u);
            if (x >= lo && x <= hi) {
                *out = x;
                return true;
            }
        }
        return fail(k.col, "bad immediate '" + std::string(k.text) + "' (expected an integer in " + std::to_string(lo) +
                               ".." + std::to_string(hi) + ")");
    }

    // "[dA]", "[dA + off]", "[dA - off]" (blanks optional) or a bare "dA".
    bool address(const Token& k, u8* addr, s64* offset, bool* bracketed) {
        std::string_view v = k.text;
        *bracketed = !v.empty() && v[0] == '[';
        if (!*bracketed)
            return reg(k, 'd', addr);
        if (v.back() != ']')
            return fail(k.col,
                        "bad address '" + std::string(k.text) + "' (expected [dA], [dA + offset] or [dA - offset])");
        v = v.substr(1, v.size() - 2);
        const size_t op = v.find_first_of("+-");
        std::string_view r = v.substr(0, op);
        while (!r.empty() && is_blank(r.back()))
            r.remove_suffix(1);
        size_t lead = 0;
        while (lead < r.size() && is_blank(r[lead]))
            lead++;
        if (!reg({r.substr(lead), k.col + 1 + static_cast<u32>(lead)}, 'd', addr))
            return false;
        *offset = 0;
        if (op == std::string_view::npos)
            return true;
        std::string_view o = v.substr(op + 1);
        size_t ol = 0;
        while (ol < o.size() && is_blank(o[ol]))
            ol++;
        const u32 ocol = k.col + 1 + static_cast<u32>(op + 1 + ol);
        s64 x = 0;
        if (!imm({o.substr(ol), ocol}, 0, v[op] == '-' ? -static_cast<s64>(INT16_MIN) : INT16_MAX, &x))
            return false;
        *offset = v[op] == '-' ? -x : x;
        return true;
    }

    // "@name" or "@name+offset", the offset below 2^48.
    bool symbol(const Token& k, AsmInstr* in) {
        std::string_view r = k.text.substr(1);
        std::optional<u64> off = 0;
        if (const size_t p = r.find('+'); p != std::string_view::npos) {
            off = parse_unsigned(r.substr(p + 1));
            r = r.substr(0, p);
        }
        if (r.empty() || !off || *off > kImm48Max)
            return fail(k.col,
                        "bad symbol '" + std::string(k.text) + "' (expected @name or @name+offset, offset < 2^48)");
        in->symbol = std::string(r);
        in->symbol_column = k.col;
        in->imm = static_cast<s64>(*off);
        return true;
    }

    bool mask_value(const Token& k, u16 hi_mask, u16* out) {
        s64 v = 0;
        if (!imm(k, 0, hi_mask, &v))
            return false;
        *out = static_cast<u16>(v);
        return true;
    }

    bool operands(AsmInstr& in) {
        std::vector<std::string> mods;
        std::vector<std::pair<std::string, Token>> kv;
        const unsigned sb_bits = std::min(opts_.scoreboards, 16u);
        const u16 sb_mask = static_cast<u16>((1u << sb_bits) - 1);
        switch (in.op) {
        case AsmOp::Nop:
            if (!modifiers({}, &mods) || !named({}, &kv))
                return false;
            return pos_.empty() || imm(pos_[0], 0, static_cast<s64>(kNopPayloadMax), &in.imm);
        case AsmOp::Move48: {
            if (!modifiers({}, &mods) || !named({}, &kv) || !count(2))
                return false;
            bool ok = reg(pos_[0], 'd', &in.dst);
            if (pos_[1].text[0] == '@')
                return symbol(pos_[1], &in) && ok;
            return imm(pos_[1], 0, static_cast<s64>(kImm48Max), &in.imm) && ok;
        }
        case AsmOp::Move32: {
            if (!modifiers({}, &mods) || !named({}, &kv) || !count(2))
                return false;
            bool ok = reg(pos_[0], 'r', &in.dst);
            return imm(pos_[1], INT32_MIN, UINT32_MAX, &in.imm) && ok;
        }
        case AsmOp::AddImm32: {
            if (!modifiers({}, &mods) || !named({}, &kv) || !count(3))
                return false;
            bool ok = reg(pos_[0], 'r', &in.dst);
            ok = reg(pos_[1], 'r', &in.src) && ok;
            return imm(pos_[2], INT32_MIN, INT32_MAX, &in.imm) && ok;
        }
        case AsmOp::Load:
        case AsmOp::Store: {
            if (!modifiers({}, &mods) || !named({"mask"}, &kv) || !count(2))
                return false;
            bool wide = false, bracketed = false;
            bool ok = reg(pos_[0], kv.empty() ? '*' : 'r', &in.dst, &wide);
            ok = address(pos_[1], &in.src, &in.imm, &bracketed) && ok;
            if (pos_.size() == 3) {
                if (bracketed)
                    return fail(pos_[2].col,
                                "unexpected '" + std::string(pos_[2].text) +
                                    "' after a bracketed address (expected the offset inside: [dA + offset])");
                ok = imm(pos_[2], INT16_MIN, INT16_MAX, &in.imm) && ok;
            }
            in.mask = wide ? 0x3 : 0x1;
            if (!kv.empty()) {
                ok = mask_value(kv[0].second, 0xFFFF, &in.mask) && ok;
                if (ok && (in.mask == 0 || static_cast<unsigned>(in.dst + std::bit_width(in.mask) - 1) >= opts_.regs))
                    return fail(kv[0].second.col, "bad register mask '" + std::string(kv[0].second.text) +
                                                      "' (expected a non-zero mask of registers below r" +
                                                      std::to_string(opts_.regs) + ")");
            }
            return ok;
        }
        case AsmOp::Wait: {
            if (!modifiers({"PROGRESS"}, &mods) || !named({"wait"}, &kv))
                return false;
            in.progress = !mods.empty();
            const u16 all = static_cast<u16>((1u << std::min(opts_.scoreboards, 8u)) - 1);  // an 8-bit field
            if (pos_.size() + kv.size() != 1)
                return fail(mnem_.col, name_ + " takes one scoreboard mask, got " +
                                           std::to_string(pos_.size() + kv.size()) + " (expected " + shape_->syntax +
                                           ")");
            const Token& k = pos_.empty() ? kv[0].second : pos_[0];
            u16 m = 0;
            if (upper(k.text) == "ALL")
                m = all;
            else if (!mask_value(k, all, &m))
                return false;
            in.imm = m;
            return true;
        }
        case AsmOp::SyncAdd64: {
            if (!modifiers({"SYSTEM", "CSG", "PROPAGATE"}, &mods) || !named({"wait", "signal"}, &kv) || !count(2))
                return false;
            if (!mods.empty()) {
                in.scope_csg = std::find(mods.begin(), mods.end(), "CSG") != mods.end();
                in.propagate = std::find(mods.begin(), mods.end(), "PROPAGATE") != mods.end();
                if (in.scope_csg && std::find(mods.begin(), mods.end(), "SYSTEM") != mods.end())
                    return fail(mnem_.col, "both .system and .csg on " + name_ + " (expected one scope)");
            }
            bool bracketed = false;
            s64 off = 0;
            bool ok = address(pos_[0], &in.dst, &off, &bracketed);
            if (ok && off != 0)
                return fail(pos_[0].col, "an offset on the address of " + name_ + " (expected [dAddr])");
            ok = reg(pos_[1], 'd', &in.src) && ok;
            for (auto& [key, v] : kv) {
                if (key == "WAIT") {
                    ok = mask_value(v, sb_mask, &in.sb_wait) && ok;
                } else {
                    std::string_view s = v.text;
                    const bool sb = s.size() > 2 && (s[0] == 's' || s[0] == 'S') && (s[1] == 'b' || s[1] == 'B');
                    const std::optional<u64> slot = sb ? parse_unsigned(s.substr(2)) : std::nullopt;
                    if (!slot || *slot >= opts_.scoreboards)
                        ok = fail(v.col, "bad signal slot '" + std::string(v.text) + "' (expected sb0..sb" +
                                             std::to_string(opts_.scoreboards - 1) + ")");
                    else
                        in.sb_signal = static_cast<u8>(*slot);
                }
            }
            return ok;
        }
        case AsmOp::SyncWait64: {
            if (!modifiers({"LE", "GT", "REJECT"}, &mods) || !named({}, &kv))
                return false;
            const bool le = std::find(mods.begin(), mods.end(), "LE") != mods.end();
            const bool gt = std::find(mods.begin(), mods.end(), "GT") != mods.end();
            in.reject = std::find(mods.begin(), mods.end(), "REJECT") != mods.end();
            if (le && gt)
                return fail(mnem_.col, "both .le and .gt on " + name_ + " (expected one condition)");
            if (!count(le || gt ? 2 : 3))
                return false;
            if ((le || gt) && pos_.size() == 3)
                return fail(pos_[2].col, "unexpected '" + std::string(pos_[2].text) + "' after the operands of " +
                                             name_ +
                                             " (expected the condition once, as .le/.gt or as the last operand)");
            bool bracketed = false;
            s64 off = 0;
            bool ok = address(pos_[0], &in.dst, &off, &bracketed);
            if (ok && off != 0)
                return fail(pos_[0].col, "an offset on the address of " + name_ + " (expected [dAddr])");
            ok = reg(pos_[1], 'd', &in.src) && ok;
            in.cond_greater = gt;
            if (pos_.size() == 3) {
                const std::string c = upper(pos_[2].text);
                if (c == "GT" || c == "GREATER")
                    in.cond_greater = true;
                else if (c != "LE" && c != "LEQUAL")
                    return fail(pos_[2].col, "bad condition '" + std::string(pos_[2].text) + "' (expected le or gt)");
            }
            return ok;
        }
        }
        return false;
    }

    const AsmOptions& opts_;
    u32 line_;
    std::vector<AsmError>* errors_;
    Token mnem_;
    const Shape* shape_ = nullptr;
    std::string name_;  // the mnemonic as written, upper case, without modifiers
    std::vector<Token> mods_, pos_, named_;
};

}  // namespace

const char* asm_op_name(AsmOp op) {
    for (const Shape& s : kShapes)
        if (s.op == op)
            return s.canonical;
    return "?";
}

std::string AsmError::to_string() const {
    return std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

AsmProgram parse_asm(std::string_view text, const AsmOptions& opts) {
    AsmProgram p;
    size_t pos = 0;
    for (u32 line = 1;; line++) {
        const size_t nl = text.find('\n', pos);
        const std::string_view l = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        std::optional<AsmInstr> in;
        if (LineParser(opts, line, &p.errors).parse(l, &in) && in)
            p.instrs.push_back(std::move(*in));
        if (nl == std::string_view::npos)
            break;
        pos = nl + 1;
    }
    return p;
}

u64 encode(const AsmInstr& in, u64 symbol_value) {
    switch (in.op) {
    case AsmOp::Nop: return static_cast<u64>(in.imm) & kNopPayloadMax;
    case AsmOp::Move48:
        return isa::move48(in.dst, (static_cast<u64>(in.imm) + (in.symbol.empty() ? 0 : symbol_value)) & kImm48Max);
    case AsmOp::Move32: return isa::move32(in.dst, static_cast<u32>(in.imm));
    case AsmOp::AddImm32: return isa::add_imm32(in.dst, in.src, static_cast<std::int32_t>(in.imm));
    case AsmOp::Load: return isa::load_multiple(in.dst, in.src, in.mask, static_cast<std::int16_t>(in.imm));
    case AsmOp::Store: return isa::store_multiple(in.dst, in.src, in.mask, static_cast<std::int16_t>(in.imm));
    case AsmOp::Wait: return isa::wait(static_cast<u16>(in.imm), in.progress);
    case AsmOp::SyncAdd64:
        return isa::sync_add64(in.dst, in.src, in.scope_csg ? isa::SCOPE_CSG : isa::SCOPE_SYSTEM, in.propagate,
                               in.sb_wait, in.sb_signal);
    case AsmOp::SyncWait64:
        return isa::sync_wait64(in.dst, in.src, in.cond_greater ? isa::GREATER : isa::LEQUAL, in.reject);
    }
    return 0;
}

AsmWords assemble(std::string_view text, const AsmOptions& opts, const AsmSymbols& symbols) {
    AsmWords w;
    AsmProgram p = parse_asm(text, opts);
    w.errors = std::move(p.errors);
    std::vector<u64> words;
    for (const AsmInstr& in : p.instrs) {
        std::optional<u64> value = 0;
        if (!in.symbol.empty()) {
            value = symbols ? symbols(in.symbol) : std::nullopt;
            if (!value) {
                w.errors.push_back({in.line, in.symbol_column, "undefined symbol '" + in.symbol + "'"});
                continue;
            }
        }
        words.push_back(encode(in, *value));
    }
    std::stable_sort(w.errors.begin(), w.errors.end(), [](const AsmError& a, const AsmError& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    if (w.errors.empty())
        w.words = std::move(words);
    return w;
}

}  // namespace umd::cs
