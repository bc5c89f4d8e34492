// Mirrors include/linux/kthread.h's kthread_worker: one kthread that runs queued kthread_works
// in queueing order (drivers use it where a workqueue's concurrency is unwanted, e.g. a
// dedicated, possibly real-time, submission thread).
//
// Kept from the kernel: queueing a work that is already queued returns false; a work belongs
// to one worker at a time; the function runs with the work already off the list, so it may
// requeue (or free) itself; kthread_flush_work waits for the instance queued or running at
// the time of the call, kthread_flush_worker for everything queued before it.
// Different: kthread_create_worker starts the thread at once, as kernels before 6.14 did;
// kthread_run_worker (6.14+) is the same call. Code written for either ports unchanged, since
// the only thing the newer split allows before the wake-up is binding the thread to a CPU,
// which has no meaning here. No delayed works, no worker flags (KTW_FREEZABLE is accepted and
// ignored: nothing freezes here).
#pragma once
#include <boost/intrusive/list.hpp>

#include "kernel_shim/sched.h"
#include "kernel_shim/spinlock.h"

namespace kshim {

struct kthread_work;
struct kthread_worker;
using kthread_work_func_t = void (*)(kthread_work*);

struct kthread_work {
    kthread_work_func_t func = nullptr;
    // Under the worker's lock.
    kthread_worker* worker = nullptr;  // where it was last queued
    int canceling = 0;                 // kthread_cancel_work_sync in progress: queueing refused
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;
};

inline constexpr unsigned KTW_FREEZABLE = 1u << 0;

struct kthread_worker {
    unsigned flags = 0;
    SpinLock lock{"kthread_worker.lock"};  // protects work_list, current_work, the works' fields
    boost::intrusive::list<
        kthread_work, boost::intrusive::member_hook<kthread_work, decltype(kthread_work::node), &kthread_work::node>,
        boost::intrusive::constant_time_size<false>>
        work_list;
    kthread_work* current_work = nullptr;  // running now (may be freed by then: compared only)
    Task* task = nullptr;
};

inline void kthread_init_work(kthread_work* work, kthread_work_func_t fn) {
    work->func = fn;
    work->worker = nullptr;
    work->canceling = 0;
}

// Returns the worker, or ERR_PTR(-ENOMEM).
kthread_worker* kthread_create_worker(unsigned flags, const char* namefmt, ...) __attribute__((format(printf, 2, 3)));
kthread_worker* kthread_run_worker(unsigned flags, const char* namefmt, ...) __attribute__((format(printf, 2, 3)));
// Flushes, stops the thread and frees the worker. Nothing may queue on it any more.
void kthread_destroy_worker(kthread_worker* worker);

bool kthread_queue_work(kthread_worker* worker, kthread_work* work);
void kthread_flush_work(kthread_work* work);
void kthread_flush_worker(kthread_worker* worker);
// Takes a queued work off its worker and waits for a running instance; true if it was queued.
bool kthread_cancel_work_sync(kthread_work* work);

}  // namespace kshim
