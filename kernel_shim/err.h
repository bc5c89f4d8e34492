// Mirrors include/linux/err.h: an errno carried in a pointer's top 4095 values.
#pragma once
#include <cstdint>

namespace kshim {

inline constexpr int MAX_ERRNO = 4095;

template <class T = void>
inline T* ERR_PTR(long error) {
    return reinterpret_cast<T*>(static_cast<intptr_t>(error));
}
inline long PTR_ERR(const void* p) {
    return static_cast<long>(reinterpret_cast<intptr_t>(p));
}
inline bool IS_ERR(const void* p) {
    return reinterpret_cast<uintptr_t>(p) >= static_cast<uintptr_t>(-MAX_ERRNO);
}
inline bool IS_ERR_OR_NULL(const void* p) {
    return !p || IS_ERR(p);
}

}  // namespace kshim
