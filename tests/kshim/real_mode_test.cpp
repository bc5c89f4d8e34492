// The same primitives on real threads and the real clock (also run under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include <pthread.h>

#include "kernel_shim/backend.h"
#include "kernel_shim/completion.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/kthread.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/rwsem.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/timer_event.h"
#include "kernel_shim/wait.h"
#include "kernel_shim/wait_bit.h"
#include "kernel_shim/workqueue.h"
#include "kernel_shim/ww_mutex.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Real : public kshim::testing::RealKernelTest {};

TEST_F(Real, MutexAndSpinlockExcludeAcrossThreads) {
    Mutex m("real.m");
    SpinLock s("real.s");
    long a = 0, b = 0;
    std::vector<Task*> ts;
    for (int i = 0; i < 4; i++)
        ts.push_back(kthread_run(
            [&] {
                for (int k = 0; k < 2000; k++) {
                    {
                        MutexGuard g(m);
                        a++;
                    }
                    SpinGuard g(s);
                    b++;
                }
                return 0;
            },
            "worker"));
    for (Task* t : ts)
        kthread_stop(t);
    EXPECT_EQ(a, 8000);
    EXPECT_EQ(b, 8000);
}

// Objects allocated on one thread and freed on another (the scheduler's pattern: the submitter
// allocates fences, the worker frees them) pass through per-thread magazines in release and
// TSan builds; a cache destroyed while another thread still holds a magazine of it is freed
// cleanly when that thread next uses the slot or exits.
TEST_F(Real, KmemCacheAcrossThreadsAndDestroyWithMagazinesElsewhere) {
    KmemCache* a = kmem_cache_create("real.cache_a", 48, 0, 0);
    std::vector<void*> handoff;
    SpinLock lock("real.handoff");
    std::atomic<bool> produced{false};
    completion drained, destroyed;
    init_completion(&drained);
    init_completion(&destroyed);
    Task* producer = kthread_run(
        [&] {
            for (int k = 0; k < 5000; k++) {
                void* p = kmem_cache_alloc(a, GFP_KERNEL);
                EXPECT_NE(p, nullptr);
                SpinGuard g(lock);
                handoff.push_back(p);
            }
            produced = true;
            return 0;
        },
        "producer");
    Task* consumer = kthread_run(
        [&] {
            for (;;) {
                // Read before the hand-off is emptied: if the producer had finished by then, nothing
                // can arrive after this batch.
                const bool producer_done = produced;
                std::vector<void*> batch;
                {
                    SpinGuard g(lock);
                    batch.swap(handoff);
                }
                for (void* p : batch)
                    kmem_cache_free(a, p);
                if (producer_done)
                    break;
            }
            complete(&drained);
            // Exits only after the cache is gone, holding a magazine of it until then.
            wait_for_completion(&destroyed);
            return 0;
        },
        "consumer");
    kthread_stop(producer);
    wait_for_completion(&drained);
    EXPECT_EQ(kmem_cache_live(a), 0u);
    kmem_cache_destroy(a);
    complete(&destroyed);
    kthread_stop(consumer);
    // A cache created afterwards reuses no id; allocating from it on this thread works.
    KmemCache* b = kmem_cache_create("real.cache_b", 48, 0, 0);
    void* p = kmem_cache_alloc(b, GFP_KERNEL);
    ASSERT_NE(p, nullptr);
    kmem_cache_free(b, p);
    EXPECT_EQ(kmem_cache_live(b), 0u);
    kmem_cache_destroy(b);
}

// Live counts stay exact although each thread counts its allocs and frees in its own magazine:
// checked while both threads still hold their counts, after the freeing thread's magazine was
// re-bound to other caches, and after that thread exited.
TEST_F(Real, KmemCacheLiveIsExactWithAllocAndFreeOnDifferentThreads) {
    KmemCache* c = kmem_cache_create("real.live_exact", 40, 0, 0);
    // Eight more caches: one of them shares c's magazine slot, whichever ids they get.
    KmemCache* others[8];
    for (auto*& o : others)
        o = kmem_cache_create("real.live_other", 24, 0, 0);
    auto live_in_counters = [&] {
        for (auto& [name, live] : mem_counters().caches)
            if (name == "real.live_exact")
                return live;
        return -1L;
    };
    constexpr int kObjs = 100, kFreed = 60;
    std::vector<void*> objs;
    completion allocated, freed, producer_exit, consumer_exit;
    for (completion* x : {&allocated, &freed, &producer_exit, &consumer_exit})
        init_completion(x);
    Task* producer = kthread_run(
        [&] {
            for (int k = 0; k < kObjs; k++)
                objs.push_back(kmem_cache_alloc(c, GFP_KERNEL));
            complete(&allocated);
            wait_for_completion(&producer_exit);  // keeps its +100 unfolded until then
            return 0;
        },
        "producer");
    wait_for_completion(&allocated);
    EXPECT_EQ(kmem_cache_live(c), size_t(kObjs));
    EXPECT_EQ(live_in_counters(), kObjs);

    Task* consumer = kthread_run(
        [&] {
            for (int k = 0; k < kFreed; k++)
                kmem_cache_free(c, objs[k]);
            complete(&freed);
            wait_for_completion(&consumer_exit);
            // Re-binds the slot c's magazine sits in: its -60 is folded into the cache.
            for (KmemCache* o : others)
                kmem_cache_free(o, kmem_cache_alloc(o, GFP_KERNEL));
            return 0;
        },
        "consumer");
    wait_for_completion(&freed);
    EXPECT_EQ(kmem_cache_live(c), size_t(kObjs - kFreed));
    EXPECT_EQ(live_in_counters(), kObjs - kFreed);
    complete(&consumer_exit);
    kthread_stop(consumer);  // joined: its thread-exit fold has run
    EXPECT_EQ(kmem_cache_live(c), size_t(kObjs - kFreed));
    EXPECT_EQ(live_in_counters(), kObjs - kFreed);

    // This thread's own count adds in as well.
    void* mine = kmem_cache_alloc(c, GFP_KERNEL);
    EXPECT_EQ(kmem_cache_live(c), size_t(kObjs - kFreed + 1));
    kmem_cache_free(c, mine);

    complete(&producer_exit);
    kthread_stop(producer);
    EXPECT_EQ(kmem_cache_live(c), size_t(kObjs - kFreed));
    for (int k = kFreed; k < kObjs; k++)
        kmem_cache_free(c, objs[k]);
    EXPECT_EQ(kmem_cache_live(c), 0u);
    EXPECT_EQ(live_in_counters(), 0);
    for (KmemCache* o : others) {
        EXPECT_EQ(kmem_cache_live(o), 0u);
        kmem_cache_destroy(o);
    }
    kmem_cache_destroy(c);
    EXPECT_FALSE(expect_report(ReportKind::Leak));
}

// The leak report of kmem_cache_destroy counts the +3 and the -2 still sitting in two live
// threads' magazines.
TEST_F(Real, KmemCacheDestroyCountsLeaksAcrossThreadMagazines) {
    KmemCache* c = kmem_cache_create("real.leak_split", 40, 0, 0);
    std::vector<void*> objs;
    completion allocated, freed, destroyed;
    for (completion* x : {&allocated, &freed, &destroyed})
        init_completion(x);
    Task* producer = kthread_run(
        [&] {
            for (int k = 0; k < 3; k++)
                objs.push_back(kmem_cache_alloc(c, GFP_KERNEL));
            complete(&allocated);
            wait_for_completion(&destroyed);  // exits holding a magazine of a destroyed cache
            return 0;
        },
        "producer");
    wait_for_completion(&allocated);
    Task* consumer = kthread_run(
        [&] {
            kmem_cache_free(c, objs[0]);
            kmem_cache_free(c, objs[1]);
            complete(&freed);
            wait_for_completion(&destroyed);
            return 0;
        },
        "consumer");
    wait_for_completion(&freed);
    EXPECT_EQ(kmem_cache_live(c), 1u);
    kmem_cache_destroy(c);
    std::vector<Report> reports = take_reports();
    complete_all(&destroyed);  // two waiters
    kthread_stop(producer);
    kthread_stop(consumer);
    ::operator delete(objs[2], std::align_val_t(alignof(std::max_align_t)));  // the cache is gone
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, ReportKind::Leak);
    EXPECT_NE(reports[0].title.find("real.leak_split"), std::string::npos) << reports[0].title;
    EXPECT_EQ(reports[0].detail, "1 object(s) remaining");
}

TEST_F(Real, WorkqueueFlushAndDelayedWork) {
    static std::atomic<int> runs;
    runs = 0;
    workqueue_struct* wq = alloc_workqueue("real-wq", WQ_UNBOUND, 4);
    work_struct w[16];
    for (auto& x : w) {
        INIT_WORK(&x, [](work_struct*) { runs++; });
        queue_work(wq, &x);
    }
    flush_workqueue(wq);
    EXPECT_EQ(runs.load(), 16);
    delayed_work dw;
    INIT_DELAYED_WORK(&dw, [](work_struct*) { runs += 100; });
    queue_delayed_work(wq, &dw, HZ * 60);  // far off: the flush is what runs it
    // Its return value may be false here: a worker can finish the item before flush_work
    // looks (as in the kernel). That it ran by now is what flushing promises.
    flush_delayed_work(&dw);
    EXPECT_EQ(runs.load(), 116);
    destroy_workqueue(wq);
}

TEST_F(Real, CancelDelayedWorkSyncBeforeDeadline) {
    static std::atomic<int> runs;
    runs = 0;
    delayed_work dw;
    INIT_DELAYED_WORK(&dw, [](work_struct*) { runs++; });
    queue_delayed_work(system_wq(), &dw, HZ * 10);
    EXPECT_TRUE(cancel_delayed_work_sync(&dw));
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(runs.load(), 0);
}

TEST_F(Real, CompletionAcrossThreadsAndTimeout) {
    completion c;
    EXPECT_EQ(wait_for_completion_timeout(&c, 1), 0);  // one jiffy of real time
    Task* t = kthread_run(
        [&] {
            complete(&c);
            return 0;
        },
        "completer");
    EXPECT_GT(wait_for_completion_timeout(&c, HZ * 10), 0);
    kthread_stop(t);
}

TEST_F(Real, TimersFireOnTheTimerThread) {
    completion c;
    bool atomic_ctx = false;
    timer_list t;
    timer_setup(&t, [&](timer_list*) {
        atomic_ctx = in_softirq();
        complete(&c);
    });
    mod_timer(&t, jiffies + 1);
    wait_for_completion(&c);
    del_timer_sync(&t);
    EXPECT_TRUE(atomic_ctx);
}

TEST_F(Real, WwMutexOppositeOrdersComplete) {
    static WwClass cls("real_ww");
    WwMutex a(&cls), b(&cls);
    auto lock_pair = [&](WwMutex* first, WwMutex* second) {
        for (int iter = 0; iter < 200; iter++) {
            WwAcquireCtx ctx;
            ww_acquire_init(&ctx, &cls);
            WwMutex* order[2] = {first, second};
            WwMutex* contended = nullptr;
            for (;;) {
                if (contended)
                    contended->lock_slow(&ctx);
                WwMutex* other = contended == order[0] ? order[1] : order[0];
                if (!contended) {
                    if (order[0]->lock(&ctx) == -EDEADLK) {
                        contended = order[0];
                        continue;
                    }
                    other = order[1];
                }
                if (other->lock(&ctx) == -EDEADLK) {
                    (contended ? contended : order[0])->unlock();
                    contended = other;
                    continue;
                }
                break;
            }
            a.unlock();
            b.unlock();
            ww_acquire_fini(&ctx);
        }
        return 0;
    };
    Task* t1 = kthread_run([&] { return lock_pair(&a, &b); }, "ab");
    Task* t2 = kthread_run([&] { return lock_pair(&b, &a); }, "ba");
    kthread_stop(t1);
    kthread_stop(t2);
    EXPECT_FALSE(a.is_locked() || b.is_locked());
}

TEST_F(Real, ThreadedIrqFromAnotherThread) {
    IrqLine line("real-irq", 7);
    std::atomic<int> hard{0}, threaded{0};
    completion done;
    request_threaded_irq(
        &line,
        [&](int, void*) {
            hard++;
            return IRQ_WAKE_THREAD;
        },
        [&](int, void*) {
            threaded++;
            line.set_level(false);
            complete(&done);
            return IRQ_HANDLED;
        },
        0, "real", &line);
    Task* device = kthread_run(
        [&] {
            line.set_level(true);
            return 0;
        },
        "device");
    wait_for_completion(&done);
    kthread_stop(device);
    free_irq(&line, &line);
    EXPECT_GE(hard.load(), 1);
    EXPECT_GE(threaded.load(), 1);
}

TEST_F(Real, RunUntilIdleWaitsForQueuedWork) {
    static std::atomic<int> runs;
    runs = 0;
    work_struct w;
    INIT_WORK(&w, [](work_struct*) {
        msleep(2);
        runs++;
    });
    queue_work(system_unbound_wq(), &w);
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(runs.load(), 1);
}

// The kthread worker and variable waits on real threads (TSan runs this file): works queued
// from two threads all run, in order per queuer, and a wait_var_event waiter sees the count.
namespace {
struct CountWork {
    kthread_work work;
    std::atomic<int>* count;
    std::atomic<int>* last_of[2];
    int queuer = 0, index = 0;
    bool in_order = true;
};
}  // namespace

TEST_F(Real, KthreadWorkerAndWaitVarAcrossThreads) {
    kthread_worker* worker = kthread_run_worker(0, "real-worker");
    std::atomic<int> count{0};
    std::atomic<int> last0{-1}, last1{-1};
    constexpr int kPer = 200;
    std::vector<CountWork> works(2 * kPer);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < kPer; i++) {
            CountWork& w = works[q * kPer + i];
            w.count = &count;
            w.last_of[0] = &last0;
            w.last_of[1] = &last1;
            w.queuer = q;
            w.index = i;
            kthread_init_work(&w.work, [](kthread_work* kw) {
                CountWork* w = container_of(kw, CountWork, work);
                w->in_order = w->last_of[w->queuer]->exchange(w->index) == w->index - 1;
                w->count->fetch_add(1);
                wake_up_var(w->count);
            });
        }
    Task* q1 = kthread_run(
        [&] {
            for (int i = 0; i < kPer; i++)
                kthread_queue_work(worker, &works[kPer + i].work);
            return 0;
        },
        "queuer1");
    for (int i = 0; i < kPer; i++)
        kthread_queue_work(worker, &works[i].work);
    kthread_stop(q1);
    wait_var_event(&count, count.load() == 2 * kPer);
    kthread_flush_worker(worker);
    for (auto& w : works)
        EXPECT_TRUE(w.in_order);
    kthread_destroy_worker(worker);
}

// A loaded host starves the timer thread that runs the hardware's effects; real hardware does
// not slow down when the CPU is busy. A timed wait whose deadline passes first lets the timer
// thread run every hardware effect due by then, so an effect due well before the deadline is
// seen, however late the host ran it. Here a timer callback holds the timer thread for 100 ms
// while a hardware effect is due after 1 ms and the wait gives up after 5 ms.
namespace {
struct StarveAndComplete {
    wait_queue_head wq;
    std::atomic<bool> done{false};
    static void busy(TimerEvent*, u64) {
        const ktime_t until = ktime_get() + 100 * NSEC_PER_MSEC;
        while (ktime_get() < until) {
        }
    }
    static void complete(TimerEvent* ev, u64) {
        auto* self = static_cast<StarveAndComplete*>(ev->owner);
        self->done.store(true);
        wake_up(&self->wq);
    }
};
}  // namespace

TEST_F(Real, TimedWaitSeesHardwareEffectsDueBeforeItsDeadline) {
    StarveAndComplete s;
    TimerEvent starve(&StarveAndComplete::busy, &s, kBandTimer, "starve");
    TimerEvent effect(&StarveAndComplete::complete, &s, kBandHardware, "effect");
    const ktime_t now = ktime_get();
    backend().timer_arm(&starve, now);
    backend().timer_arm(&effect, now + NSEC_PER_MSEC);
    const long left = wait_event_timeout(s.wq, s.done.load(), msecs_to_jiffies(5));
    EXPECT_TRUE(s.done.load());
    EXPECT_EQ(left, 1) << "the effect was due before the deadline: not a timeout";
    backend().timer_cancel(&starve);
    backend().timer_cancel(&effect);
    backend().timer_wait_idle(&starve);
    backend().timer_wait_idle(&effect);
}

// perf sched and gdb tell the runtime's host threads apart by name: each carries its task's, a
// worker's without "kworker/", a long one by its end (docs/kshim.md, "Real mode: wake-up chain").
TEST_F(Real, HostThreadsCarryTheirTasksNames) {
    auto host_name = [] {
        char buf[16] = {};
        pthread_getname_np(pthread_self(), buf, sizeof(buf));
        return std::string(buf);
    };
    std::string kthread, worker, timer;
    Task* t = kthread_run(
        [&] {
            kthread = host_name();
            return 0;
        },
        "name-test");
    kthread_stop(t);
    EXPECT_EQ(kthread, "name-test");

    static std::string* worker_out;
    worker_out = &worker;
    workqueue_struct* wq = alloc_workqueue("a-long-wq-name", 0, 1);
    work_struct w;
    INIT_WORK(&w, [](work_struct*) {
        char buf[16] = {};
        pthread_getname_np(pthread_self(), buf, sizeof(buf));
        *worker_out = buf;
    });
    queue_work(wq, &w);
    flush_workqueue(wq);
    destroy_workqueue(wq);
    EXPECT_EQ(worker, "-long-wq-name:0");  // "a-long-wq-name:0" keeps its last 15 bytes

    completion c;
    timer_list tl;
    timer_setup(&tl, [&](timer_list*) {
        timer = host_name();
        complete(&c);
    });
    mod_timer(&tl, jiffies);
    wait_for_completion(&c);
    del_timer_sync(&tl);
    EXPECT_EQ(timer, "softirq");
}

// The timer thread sleeps until its earliest event; an event armed before that one must wake it
// (and one armed after it must not be lost either).
namespace {
struct FireAt {
    std::atomic<ktime_t> fired{0};
    static void fire(TimerEvent* ev, u64) { static_cast<FireAt*>(ev->owner)->fired.store(ktime_get()); }
};
}  // namespace

TEST_F(Real, AnEarlierEventWakesTheSleepingTimerThread) {
    FireAt late, early, later;
    TimerEvent a(&FireAt::fire, &late, kBandTimer, "late");
    TimerEvent b(&FireAt::fire, &early, kBandTimer, "early");
    TimerEvent c(&FireAt::fire, &later, kBandTimer, "later");
    const ktime_t t0 = ktime_get();
    backend().timer_arm(&a, t0 + 60 * NSEC_PER_SEC);
    // Let the timer thread go to sleep for `a` (its spin window is far shorter than this).
    msleep(20);
    const ktime_t t1 = ktime_get();
    backend().timer_arm(&b, t1 + NSEC_PER_MSEC);
    backend().timer_arm(&c, t1 + 30 * NSEC_PER_SEC);  // after b: needs no wake-up, must not fire early
    ASSERT_TRUE(backend().run_until([&] { return early.fired.load() != 0; }, 10 * NSEC_PER_SEC));
    EXPECT_GE(early.fired.load(), t1 + NSEC_PER_MSEC);
    EXPECT_EQ(late.fired.load(), 0);
    EXPECT_EQ(later.fired.load(), 0);
    EXPECT_TRUE(backend().timer_cancel(&a));
    EXPECT_TRUE(backend().timer_cancel(&c));
    backend().timer_wait_idle(&a);
    backend().timer_wait_idle(&b);
    backend().timer_wait_idle(&c);
}

// Wake-ups made in a timer callback take effect when it returns, as a softirq's do when it ends:
// woken at once, a task would preempt the callback on a busy CPU and block on the locks it
// holds. Here the callback wakes a sleeping task and then runs on for 20 ms.
namespace {
struct WakeThenRun {
    completion c;
    std::atomic<ktime_t> callback_end{0};
    std::atomic<ktime_t> woke{0};
    static void fire(TimerEvent* ev, u64) {
        auto* self = static_cast<WakeThenRun*>(ev->owner);
        complete(&self->c);
        const ktime_t until = ktime_get() + 20 * NSEC_PER_MSEC;
        while (ktime_get() < until) {
        }
        self->callback_end.store(ktime_get());
    }
};
}  // namespace

TEST_F(Real, ATimerCallbacksWakeUpsTakeEffectWhenItReturns) {
    WakeThenRun s;
    Task* t = kthread_run(
        [&] {
            wait_for_completion(&s.c);
            s.woke.store(ktime_get());
            return 0;
        },
        "waiter");
    // The waiter must sleep before the callback wakes it.
    auto sleeping = [t] {
        std::lock_guard g(t->park_lock);
        return t->parked_futex;
    };
    ASSERT_TRUE(backend().run_until(sleeping, 10 * NSEC_PER_SEC));
    TimerEvent ev(&WakeThenRun::fire, &s, kBandTimer, "wake-then-run");
    backend().timer_arm(&ev, ktime_get());
    // Nothing else may wake the waiter meanwhile (kthread_stop would).
    ASSERT_TRUE(backend().run_until([&] { return s.callback_end.load() != 0; }, 10 * NSEC_PER_SEC));
    backend().timer_wait_idle(&ev);
    kthread_stop(t);
    ASSERT_NE(s.woke.load(), 0);
    EXPECT_GE(s.woke.load(), s.callback_end.load()) << "the waiter ran before the callback returned";
}
