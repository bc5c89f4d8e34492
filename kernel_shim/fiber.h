// Stackful fibers for the simulated runtime: Boost.Context's fcontext switch, announced to
// ASan and TSan so they follow the stack changes.
#pragma once
#include <cstddef>

namespace kshim {

struct Fiber {
    void* ctx = nullptr;  // boost::context::detail::fcontext_t of the suspended fiber
    char* mapping = nullptr;
    size_t mapping_size = 0;
    const void* stack_bottom = nullptr;  // usable stack, as the sanitizers want it
    size_t stack_size = 0;
    void* asan_fake_stack = nullptr;
    void* tsan_fiber = nullptr;
    bool started = false;
    bool owns_tsan_fiber = false;
    bool exited = false;  // left through fiber_exit
    void (*entry)(void*) = nullptr;
    void* arg = nullptr;
};

// Describes the calling thread's own context as a fiber (it is never created or freed).
void fiber_adopt_thread(Fiber& f);
// Prepares a fiber that will run entry(arg) on its own stack at its first switch.
void fiber_create(Fiber& f, void (*entry)(void*), void* arg);
// Suspends `from` and resumes `to`; returns when somebody switches back to `from`.
void fiber_switch(Fiber& from, Fiber& to);
// Leaves `from` for good (it is finished) and resumes `to`. Never returns.
[[noreturn]] void fiber_exit(Fiber& from, Fiber& to);
// Frees a finished or never-started fiber's stack (not the running one's).
void fiber_destroy(Fiber& f);

}  // namespace kshim
