// Mirrors include/linux/uaccess.h (copy_from_user / copy_to_user) for ioctl arguments.
//
// There is no separate user address space: a "user pointer" is a host address carried in a
// u64. To make a bad pointer give -EFAULT instead of a crash, accesses are checked against a
// registry of user ranges (what the caller's "process" has mapped). Tests register the buffers
// they pass (UserRange); a program that trusts its caller (the preload library, benchmarks) can
// switch the check off with uaccess_set_trust_all(true).
#pragma once
#include <cstddef>

#include "kernel_shim/types.h"

namespace drm {

using kshim::u64;

// Adds [addr, addr + len) to the registry (ranges may nest or overlap; each add needs a remove).
void uaccess_register(const void* addr, size_t len);
void uaccess_unregister(const void* addr, size_t len);
// With trust-all set every non-null range is accessible (the default is the checked registry).
void uaccess_set_trust_all(bool trust);
// access_ok plus the registry: the whole range is mapped. n == 0 is always fine.
bool uaccess_ok(u64 uaddr, size_t n);

// As the kernel: the number of bytes NOT copied (0 on success). Nothing is copied on a fault.
size_t copy_from_user(void* to, u64 from, size_t n);
size_t copy_to_user(u64 to, const void* from, size_t n);
// The kernel's u64_to_user_ptr for our u64 user pointers.
inline u64 user_ptr(const void* p) { return reinterpret_cast<u64>(p); }

// RAII registration of one user buffer.
class UserRange {
public:
    UserRange(const void* addr, size_t len) : addr_(addr), len_(len) { uaccess_register(addr, len); }
    template <class T>
    explicit UserRange(const T& obj) : UserRange(&obj, sizeof(T)) {}
    ~UserRange() { uaccess_unregister(addr_, len_); }
    UserRange(const UserRange&) = delete;
    UserRange& operator=(const UserRange&) = delete;

private:
    const void* addr_;
    size_t len_;
};

}  // namespace drm
