// Mirrors include/linux/gfp_types.h: allocation flags, carried through so checks can see them.
#pragma once
#include "kernel_shim/types.h"

namespace kshim {
using gfp_t = u32;

inline constexpr gfp_t __GFP_IO = 1u << 0;
inline constexpr gfp_t __GFP_FS = 1u << 1;
inline constexpr gfp_t __GFP_DIRECT_RECLAIM = 1u << 2;  // may sleep to reclaim memory
inline constexpr gfp_t __GFP_KSWAPD_RECLAIM = 1u << 3;
inline constexpr gfp_t __GFP_HIGH = 1u << 4;
inline constexpr gfp_t __GFP_ZERO = 1u << 5;
inline constexpr gfp_t __GFP_NOWARN = 1u << 6;
inline constexpr gfp_t __GFP_RETRY_MAYFAIL = 1u << 7;
inline constexpr gfp_t __GFP_NOFAIL = 1u << 8;
inline constexpr gfp_t __GFP_NORETRY = 1u << 9;

inline constexpr gfp_t __GFP_RECLAIM = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM;
inline constexpr gfp_t GFP_KERNEL = __GFP_RECLAIM | __GFP_IO | __GFP_FS;
inline constexpr gfp_t GFP_NOFS = __GFP_RECLAIM | __GFP_IO;
inline constexpr gfp_t GFP_NOIO = __GFP_RECLAIM;
inline constexpr gfp_t GFP_NOWAIT = __GFP_KSWAPD_RECLAIM | __GFP_NOWARN;
inline constexpr gfp_t GFP_ATOMIC = __GFP_HIGH | __GFP_KSWAPD_RECLAIM;
inline constexpr gfp_t GFP_HIGHUSER = GFP_KERNEL;

inline constexpr bool gfpflags_allow_blocking(gfp_t gfp) {
    return gfp & __GFP_DIRECT_RECLAIM;
}

// Called on every allocation: a blocking allocation might sleep (might_sleep) and might enter
// reclaim (the fs_reclaim pseudo-lock that the fence-signalling checks order against).
void might_alloc(gfp_t gfp);
}  // namespace kshim
