// Independent VMSAv8-64 stage-1 walker (Arm ARM D8: translation table descriptors and lookup) and
// Mali LPAE walker (Midgard/Bifrost MMU, TRANSTAB address mode "table").
#include "tests/pgtable/lpae_walker.h"

#include "kernel_shim/page_alloc.h"

namespace pgtable_test {

namespace {
u64 bits(u64 v, unsigned hi, unsigned lo) {
    return (v >> lo) & ((hi - lo == 63) ? ~u64{0} : ((u64{1} << (hi - lo + 1)) - 1));
}

// Output address held in a descriptor whose address field starts at bit `lo`. With a 64 KiB
// granule and a 52-bit PA, OA[51:48] live in descriptor bits [15:12].
u64 descriptor_oa(u64 desc, unsigned lo, unsigned granule_shift, unsigned pa_bits) {
    u64 oa = bits(desc, 47, lo) << lo;
    if (granule_shift == 16 && pa_bits == 52)
        oa |= bits(desc, 15, 12) << 48;
    return oa;
}

}  // namespace

// Descriptor bits [addr_lo-1:12] that are not part of the output address but are set.
static u64 low_address_bits(u64 desc, unsigned addr_lo, const WalkerGeometry& g) {
    if (addr_lo <= 12)
        return 0;
    u64 low = bits(desc, addr_lo - 1, 12);
    if (g.granule_shift == 16 && g.pa_bits == 52)
        low &= ~u64{0xf};
    return low;
}

WalkerGeometry lpae_geometry(u64 tcr) {
    WalkerGeometry g;
    switch (bits(tcr, 15, 14)) {
    case 0: g.granule_shift = 12; break;
    case 1: g.granule_shift = 16; break;
    case 2: g.granule_shift = 14; break;
    default: g.granule_shift = 0; break;
    }
    g.input_bits = 64 - unsigned(bits(tcr, 5, 0));
    static const unsigned kPs[] = {32, 36, 40, 42, 44, 48, 52, 0};
    g.pa_bits = kPs[bits(tcr, 34, 32)];
    if (g.granule_shift) {
        unsigned stride = g.granule_shift - 3;
        unsigned resolved = g.input_bits - g.granule_shift;
        g.start_level = 4 - int((resolved + stride - 1) / stride);
    }
    return g;
}

Translation lpae_walk(const WalkerRegs& regs, u64 va) {
    Translation t;
    const WalkerGeometry g = lpae_geometry(regs.tcr);
    if (!g.granule_shift || !g.pa_bits) {
        t.fault = "malformed TCR";
        return t;
    }
    if (g.input_bits < 64 && (va >> g.input_bits)) {
        t.fault = "translation L0 (VA beyond T0SZ)";
        return t;
    }
    const unsigned stride = g.granule_shift - 3;
    u64 table = regs.ttbr;
    for (int level = g.start_level; level <= 3; level++) {
        const unsigned lo = g.granule_shift + unsigned(3 - level) * stride;
        const unsigned hi = level == g.start_level ? g.input_bits - 1 : lo + stride - 1;
        const u64 index = bits(va, hi, lo);
        const u64 desc_pa = table + index * 8;
        if (!kshim::phys_range_valid(desc_pa, 8)) {
            t.fault = "table outside memory L" + std::to_string(level);
            return t;
        }
        const u64 desc = *static_cast<const volatile u64*>(kshim::phys_to_virt(desc_pa));
        t.descriptor = desc;
        t.level = level;
        t.path[level] = desc;
        if (!(desc & 1)) {
            t.fault = "translation L" + std::to_string(level);
            return t;
        }
        const bool is_table_or_page = (desc & 2) != 0;
        if (level < 3 && is_table_or_page) {
            // Table descriptor: only NSTable among the hierarchical attributes is ever expected.
            if (bits(desc, 62, 59) || bits(desc, 58, 48) || bits(desc, 11, 2) ||
                low_address_bits(desc, g.granule_shift, g)) {
                t.fault = "malformed table descriptor L" + std::to_string(level);
                return t;
            }
            u64 next = descriptor_oa(desc, g.granule_shift, g.granule_shift, g.pa_bits);
            if (g.pa_bits < 64 && (next >> g.pa_bits)) {
                t.fault = "address size (table) L" + std::to_string(level);
                return t;
            }
            table = next;
            continue;
        }
        if (level == 3 && !is_table_or_page) {
            t.fault = "translation L3 (reserved descriptor type)";
            return t;
        }
        // Block (L1/L2) or page (L3). Which block levels exist depends on the granule:
        // 4K: L1 (1G) and L2 (2M); 16K: L2 (32M); 64K: L2 (512M), and L1 (4T) only with 52-bit PA.
        if (level < 3) {
            bool allowed = (g.granule_shift == 12 && (level == 1 || level == 2)) ||
                           (g.granule_shift == 14 && level == 2) ||
                           (g.granule_shift == 16 && (level == 2 || (level == 1 && g.pa_bits == 52)));
            if (!allowed) {
                t.fault = "translation (block not allowed) L" + std::to_string(level);
                return t;
            }
        }
        const unsigned block_shift = lo;
        // Below the output address only RES0 bits remain (OA[51:48] with 64K + 52-bit PA).
        if (low_address_bits(desc, block_shift, g)) {
            t.fault = "malformed leaf descriptor (RES0 address bits) L" + std::to_string(level);
            return t;
        }
        if (bits(desc, 63, 55) || bits(desc, 51, 48)) {
            t.fault = "malformed leaf descriptor (upper bits set) L" + std::to_string(level);
            return t;
        }
        u64 oa = descriptor_oa(desc, block_shift, g.granule_shift, g.pa_bits);
        if (g.pa_bits < 64 && (oa >> g.pa_bits)) {
            t.fault = "address size (output) L" + std::to_string(level);
            return t;
        }
        t.block_size = u64{1} << block_shift;
        t.pa = oa | (va & (t.block_size - 1));
        t.attr_index = unsigned(bits(desc, 4, 2));
        t.mair_attr = unsigned(bits(regs.mair, t.attr_index * 8 + 7, t.attr_index * 8));
        t.ns = bits(desc, 5, 5);
        t.ap_unpriv = bits(desc, 6, 6);
        t.ap_rdonly = bits(desc, 7, 7);
        t.sh = unsigned(bits(desc, 9, 8));
        t.af = bits(desc, 10, 10);
        t.ng = bits(desc, 11, 11);
        t.contiguous = bits(desc, 52, 52);
        t.pxn = bits(desc, 53, 53);
        t.uxn = bits(desc, 54, 54);
        t.ok = true;
        return t;
    }
    t.fault = "walk did not terminate";
    return t;
}

MaliTranstab mali_decode_transtab(u64 transtab) {
    MaliTranstab tt;
    tt.adrmode = unsigned(bits(transtab, 1, 0));
    tt.read_inner = bits(transtab, 2, 2);
    tt.share_outer = bits(transtab, 4, 4);
    tt.table = transtab & 0x0000fffffffff000ull;
    tt.reserved = transtab & ~(0x0000fffffffff000ull | 0x17ull);
    return tt;
}

Translation mali_lpae_walk(const MaliWalkerRegs& regs, u64 va) {
    Translation t;
    const MaliTranstab tt = mali_decode_transtab(regs.transtab);
    if (tt.adrmode != 3) {
        t.fault = "AS not in table-walk mode (ADRMODE " + std::to_string(tt.adrmode) + ")";
        return t;
    }
    if (tt.reserved) {
        t.fault = "malformed TRANSTAB";
        return t;
    }
    if (va >> 48) {
        t.fault = "translation L0 (VA beyond 48 bits)";
        return t;
    }
    constexpr u64 kAddr = 0x0000fffffffff000ull;  // [47:12]
    // Leaf bits the format defines: type, AttrIndx[4:2], RD/WR[7:6], SH[9:8], address, XN[54:53].
    constexpr u64 kLeafDefined = 0x3ull | (0x7ull << 2) | (0x3ull << 6) | (0x3ull << 8) | kAddr | (0x3ull << 53);
    u64 table = tt.table;
    for (int level = 0; level <= 3; level++) {
        const unsigned lo = 12 + unsigned(3 - level) * 9;
        const u64 desc_pa = table + bits(va, lo + 8, lo) * 8;
        if (!kshim::phys_range_valid(desc_pa, 8)) {
            t.fault = "table outside memory L" + std::to_string(level);
            return t;
        }
        const u64 desc = *static_cast<const volatile u64*>(kshim::phys_to_virt(desc_pa));
        t.descriptor = desc;
        t.level = level;
        t.path[level] = desc;
        const unsigned type = unsigned(desc & 3);
        if (type == 0 || type == 2) {
            t.fault = "translation L" + std::to_string(level);
            return t;
        }
        if (type == 3) {
            if (level == 3) {
                t.fault = "translation L3 (type 3 is not a Mali leaf)";
                return t;
            }
            if (desc & ~(kAddr | 3)) {
                t.fault = "malformed table descriptor L" + std::to_string(level);
                return t;
            }
            const u64 next = desc & kAddr;
            if (next >> regs.pa_bits) {
                t.fault = "address size (table) L" + std::to_string(level);
                return t;
            }
            table = next;
            continue;
        }
        // type 1: a leaf, except at level 0 where no 512 GiB block exists.
        if (level == 0) {
            t.fault = "translation L0 (no level-0 blocks)";
            return t;
        }
        if (desc & ~kLeafDefined) {
            t.fault = "malformed leaf descriptor (bits Mali does not define) L" + std::to_string(level);
            return t;
        }
        if (lo > 12 && bits(desc, lo - 1, 12)) {
            t.fault = "malformed leaf descriptor (RES0 address bits) L" + std::to_string(level);
            return t;
        }
        const u64 oa = desc & kAddr;
        if (oa >> regs.pa_bits) {
            t.fault = "address size (output) L" + std::to_string(level);
            return t;
        }
        t.block_size = u64{1} << lo;
        t.pa = oa | (va & (t.block_size - 1));
        t.attr_index = unsigned(bits(desc, 4, 2));
        t.mair_attr = unsigned(bits(regs.memattr, t.attr_index * 8 + 7, t.attr_index * 8));
        t.rd = bits(desc, 6, 6);
        t.wr = bits(desc, 7, 7);
        t.sh = unsigned(bits(desc, 9, 8));
        t.pxn = bits(desc, 53, 53);
        t.uxn = bits(desc, 54, 54);
        t.ok = true;
        return t;
    }
    t.fault = "walk did not terminate";
    return t;
}

}  // namespace pgtable_test
