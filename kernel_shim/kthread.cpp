// Mirrors kernel/kthread.c's kthread_worker part, on kthread_run and park/unpark.
#include "kernel_shim/kthread.h"

#include <cstdarg>
#include <cstdio>

#include "kernel_shim/completion.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace kshim {

namespace {

int kthread_worker_fn(kthread_worker* worker) {
    Task* me = current();
    for (;;) {
        kthread_work* work = nullptr;
        {
            SpinGuard g(worker->lock);
            worker->current_work = nullptr;
            if (kthread_should_stop())
                break;
            if (!worker->work_list.empty()) {
                work = &worker->work_list.front();
                worker->work_list.pop_front();
            }
            worker->current_work = work;
        }
        if (work) {
            // Off the list before it runs: it may requeue or free itself.
            work->func(work);
            cond_resched();
            continue;
        }
        // A queue_work between the unlock and here leaves a wake token: park returns at once.
        me->idle_park = true;
        me->wait_reason = "kthread_worker";
        backend().park(KTIME_MAX);
        me->idle_park = false;
    }
    return 0;
}

kthread_worker* create_worker(unsigned flags, const char* namefmt, va_list ap) {
    auto* worker = knew<kthread_worker>(GFP_KERNEL);
    if (!worker)
        return ERR_PTR<kthread_worker>(-ENOMEM);
    worker->flags = flags;
    char name[64];
    std::vsnprintf(name, sizeof(name), namefmt, ap);
    worker->task = kthread_run([worker] { return kthread_worker_fn(worker); }, name);
    return worker;
}

// A barrier queued behind the work (or worker) being flushed.
struct kthread_flush_work_s {
    kthread_work work;
    completion done;
};

void kthread_flush_work_fn(kthread_work* work) {
    complete(&container_of(work, kthread_flush_work_s, work)->done);
}

bool queuing_blocked_locked(kthread_work* work) {
    return work->node.is_linked() || work->canceling;
}

void insert_work_locked(kthread_worker* worker, kthread_work* work,
                        const decltype(kthread_worker::work_list)::iterator& pos) {
    lockdep_assert_held(&worker->lock);
    WARN_ON_ONCE(work->worker && work->worker != worker);
    work->worker = worker;
    worker->work_list.insert(pos, *work);
    wake_up_process(worker->task);
}

}  // namespace

kthread_worker* kthread_create_worker(unsigned flags, const char* namefmt, ...) {
    va_list ap;
    va_start(ap, namefmt);
    kthread_worker* w = create_worker(flags, namefmt, ap);
    va_end(ap);
    return w;
}

kthread_worker* kthread_run_worker(unsigned flags, const char* namefmt, ...) {
    va_list ap;
    va_start(ap, namefmt);
    kthread_worker* w = create_worker(flags, namefmt, ap);
    va_end(ap);
    return w;
}

bool kthread_queue_work(kthread_worker* worker, kthread_work* work) {
    SpinGuard g(worker->lock);
    if (queuing_blocked_locked(work))
        return false;
    insert_work_locked(worker, work, worker->work_list.end());
    return true;
}

void kthread_flush_work(kthread_work* work) {
    kthread_flush_work_s fwork;
    kthread_init_work(&fwork.work, kthread_flush_work_fn);
    init_completion(&fwork.done);
    // A work stays with the first worker it was queued on, so reading this unlocked is enough
    // to find the lock that protects the rest (the kernel does the same).
    kthread_worker* worker = work->worker;
    if (!worker)
        return;
    {
        SpinGuard g(worker->lock);
        WARN_ON_ONCE(work->worker != worker);
        if (worker->current_work == work)
            insert_work_locked(worker, &fwork.work, worker->work_list.begin());
        else if (work->node.is_linked())
            insert_work_locked(worker, &fwork.work, std::next(worker->work_list.iterator_to(*work)));
        else
            return;
    }
    wait_for_completion(&fwork.done);
}

void kthread_flush_worker(kthread_worker* worker) {
    kthread_flush_work_s fwork;
    kthread_init_work(&fwork.work, kthread_flush_work_fn);
    init_completion(&fwork.done);
    kthread_queue_work(worker, &fwork.work);
    wait_for_completion(&fwork.done);
}

bool kthread_cancel_work_sync(kthread_work* work) {
    kthread_worker* worker = work->worker;
    if (!worker)
        return false;
    bool ret = false;
    bool running = false;
    {
        SpinGuard g(worker->lock);
        WARN_ON_ONCE(work->worker != worker);
        if (work->node.is_linked()) {
            worker->work_list.erase(worker->work_list.iterator_to(*work));
            ret = true;
        }
        running = worker->current_work == work;
        if (running)
            work->canceling++;
    }
    if (running) {
        kthread_flush_work(work);
        SpinGuard g(worker->lock);
        work->canceling--;
    }
    return ret;
}

void kthread_destroy_worker(kthread_worker* worker) {
    Task* task = worker->task;
    if (WARN_ON(!task))
        return;
    kthread_flush_worker(worker);
    kthread_stop(task);
    {
        SpinGuard g(worker->lock);
        WARN_ON(!worker->work_list.empty());
    }
    kdelete(worker);
}

}  // namespace kshim
