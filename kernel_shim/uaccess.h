// Mirrors include/linux/uaccess.h (copy_from_user / copy_to_user) for ioctl arguments.
//
// There is no separate user address space: a "user pointer" is a host address carried in a
// u64. To make a bad pointer give -EFAULT instead of a crash, accesses are checked against a
// registry of user ranges (what the caller's "process" has mapped). Tests register the buffers
// they pass (UserRange); a program that trusts its caller (the preload library, benchmarks) can
// switch the check off with uaccess_set_trust_all(true). A program whose callers are a real
// process (the preload library) checks against the process's real mappings instead
// (UaccessMode::ProcessVm / FaultFixup): a pointer into nothing, or a read-only page written to,
// gives -EFAULT, never a crash.
#pragma once
#include <cstddef>
#include <mutex>

#include "kernel_shim/types.h"

namespace kshim {

// Adds [addr, addr + len) to the registry (ranges may nest or overlap; each add needs a remove).
void uaccess_register(const void* addr, size_t len);
void uaccess_unregister(const void* addr, size_t len);
// With trust-all set every non-null range is accessible (the default is the checked registry).
void uaccess_set_trust_all(bool trust);

enum class UaccessMode {
    Registry,  // the registry above (tests)
    TrustAll,  // every non-null range (benchmarks)
    // The process's own mappings decide, through process_vm_readv/process_vm_writev on the own
    // pid: the kernel does the access and reports a fault (one system call per copy, ~1.3 us here).
    ProcessVm,
    // The process's own mappings decide, as the kernel's exception table does: the copy runs
    // with a recovery point, and a SIGSEGV/SIGBUS inside it unwinds to -EFAULT. The handler is
    // installed when this mode is set and passes every other fault to the handler it replaced.
    // Costs nothing per copy; a program that later replaces the SIGSEGV handler loses the
    // recovery (a bad pointer then crashes), so the preload library offers ProcessVm too.
    FaultFixup,
};
void uaccess_set_mode(UaccessMode mode);
UaccessMode uaccess_mode();
// A served process's memory, closed to its server thread's copies once the process may have moved
// on. A syscall makes all its copies before it returns; a server that drops a connection
// (`upanthor serve` stopping) ends the client's call without a reply, and a copy-out after that
// would land in memory the client has reused (a thread's stack as it exits). The server closes
// the gate before it drops the connection: close() waits for a copy in progress, and every later
// copy through the gate faults with nothing copied.
class UaccessGate {
public:
    void close();
    bool closed() const;
    // Runs the copy `copy` unless the gate is closed; false (nothing copied) when it is.
    template <class Copy>
    bool pass(Copy&& copy) {
        std::lock_guard g(lock_);
        return !closed_ && copy();
    }

private:
    // A host mutex, not a kernel lock: held only around one copy's system call, by server threads
    // and by the main loop that stops them (which is no kernel task).
    mutable std::mutex lock_;
    bool closed_ = false;
};

// The process whose memory ProcessVm copies of the calling thread reach: the caller of the
// syscall being served (`upanthor serve` serves other processes: current->mm there), through
// `gate` when given; pid 0, the default, is the own process. Per thread, as a server thread
// serves one client call at a time.
void uaccess_set_target(int pid, UaccessGate* gate = nullptr);
int uaccess_target_pid();
// access_ok plus the registry: the whole range is mapped. n == 0 is always fine. In the process
// modes only access_ok is checked here (the copy itself finds out whether the pages exist).
bool uaccess_ok(u64 uaddr, size_t n);

// As the kernel: the number of bytes NOT copied (0 on success). Nothing is copied on a fault.
size_t copy_from_user(void* to, u64 from, size_t n);
size_t copy_to_user(u64 to, const void* from, size_t n);
// clear_user: zeroes n user bytes; the number of bytes not cleared (all of them on a fault).
size_t clear_user(u64 to, size_t n);
// check_zeroed_user: 1 if [from, from + n) is all zero, 0 if not, -EFAULT.
int check_zeroed_user(u64 from, size_t n);
// copy_struct_from_user: a user struct of `usize` bytes into a kernel one of `ksize` (extensible
// structs): a shorter one is zero-extended, a longer one must have a zero tail (-E2BIG if not).
int copy_struct_from_user(void* dst, size_t ksize, u64 src, size_t usize);
// strndup_user: a kmalloc'ed copy of a NUL-terminated user string of at most `n` bytes
// (terminator included); ERR_PTR(-EFAULT), ERR_PTR(-EINVAL) when longer, ERR_PTR(-ENOMEM).
char* strndup_user(u64 s, size_t n);

// The kernel's u64_to_user_ptr for our u64 user pointers.
inline u64 user_ptr(const void* p) {
    return reinterpret_cast<u64>(p);
}

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

}  // namespace kshim
