/* The multi-threaded work of a sw_sync conformance suite, run with libupanthor_preload.so in
 * LD_PRELOAD, each case ending with its threads exiting and the last one with process exit:
 *  - consumers: threads that each create a fence for their turn, wait for it (poll), let the
 *    main thread advance the timeline, and close it;
 *  - consumer-producers: threads that wait for their turn and advance the timeline themselves;
 *  - producers and one consumer: the consumer merges a fence from every producer's timeline,
 *    waits, and releases the producers through a timeline of its own; then it closes that
 *    timeline with the producers' fences pending;
 *  - merges of an expired fence in a tight loop;
 *  - merges across timelines whose fences are counted by status (SYNC_IOC_FILE_INFO into a heap
 *    array sized by a first call), as the suites' status checks do.
 * Every thread that entered the library leaves per-thread state behind (its kernel task, its
 * poll watches); thread exit and process exit must release it without touching memory the
 * library does not own (glibc aborts at thread exit when a freed chunk was written:
 * "unaligned tcache chunk detected"). UPANTHOR_STRESS_SCALE multiplies the iteration counts.
 * Exit 0 on success. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "client_check.h"
#include "sw_sync_uapi.h"

enum { kThreads = 4 };
static int g_scale = 1;

static int timeline_open(void) {
    return open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
}

static int merge(int a, int b) {
    struct sync_merge_data m = {.fd2 = b};
    strcpy(m.name, "merged");
    return ioctl(a, SYNC_IOC_MERGE, &m) == 0 ? m.fence : -1;
}

/* 1 when the fence signalled within ms (-1: no limit). */
static int wait_fence(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* How many of the fences behind fd have `want` as status, as conformance suites ask it: the
 * count first, then the list into a heap array of exactly that many entries. -1 on error. */
static int count_status(int fd, int want) {
    struct sync_file_info* info = calloc(1, sizeof(*info));
    if (!info || ioctl(fd, SYNC_IOC_FILE_INFO, info) != 0) {
        free(info);
        return -1;
    }
    const uint32_t n = info->num_fences;
    struct sync_fence_info* fi = calloc(n ? n : 1, sizeof(*fi));
    info->num_fences = n;
    info->sync_fence_info = (uintptr_t)fi;
    int count = -1;
    if (n && ioctl(fd, SYNC_IOC_FILE_INFO, info) == 0 && info->num_fences == n) {
        count = 0;
        for (uint32_t i = 0; i < n; i++)
            count += fi[i].status == want;
    }
    free(fi);
    free(info);
    return count;
}

/* ---- consumers: the main thread produces ---- */
struct turn {
    int timeline, id, iterations;
    uint32_t* counter;
    sem_t* sem;
};

static void* consumer(void* arg) {
    struct turn* t = arg;
    for (int i = 0; i < t->iterations; i++) {
        const uint32_t point = (uint32_t)(i * kThreads + t->id + 1);
        int f = sw_sync_create_fence(t->timeline, point);
        CHECK(f >= 0);
        CHECK(wait_fence(f, 5000));
        CHECK(__atomic_load_n(t->counter, __ATOMIC_ACQUIRE) == point);
        sem_post(t->sem);
        CHECK(close(f) == 0);
    }
    return NULL;
}

static void consumers(void) {
    const int iterations = 256 * g_scale;
    int tl = timeline_open();
    REQUIRE(tl >= 0);
    uint32_t counter = 0;
    sem_t sem;
    sem_init(&sem, 0, 0);
    pthread_t th[kThreads];
    struct turn turns[kThreads];
    for (int i = 0; i < kThreads; i++) {
        turns[i] = (struct turn){.timeline = tl, .id = i, .iterations = iterations, .counter = &counter, .sem = &sem};
        REQUIRE(pthread_create(&th[i], NULL, consumer, &turns[i]) == 0);
    }
    /* The first turn needs no post; after that, one post per finished turn. */
    for (int i = 0; i < kThreads * iterations; i++) {
        if (i)
            sem_wait(&sem);
        __atomic_add_fetch(&counter, 1, __ATOMIC_RELEASE);
        CHECK(sw_sync_inc(tl, 1) == 0);
    }
    for (int i = 0; i < kThreads; i++)
        pthread_join(th[i], NULL);
    sem_destroy(&sem);
    CHECK(close(tl) == 0);
}

/* ---- consumer-producers: each thread advances the timeline for the next ---- */
static void* consumer_producer(void* arg) {
    struct turn* t = arg;
    for (int i = 0; i < t->iterations; i++) {
        const uint32_t point = (uint32_t)(i * kThreads + t->id);
        int f = sw_sync_create_fence(t->timeline, point);
        CHECK(f >= 0);
        CHECK(wait_fence(f, 5000));
        CHECK(__atomic_fetch_add(t->counter, 1, __ATOMIC_ACQ_REL) == point);
        CHECK(sw_sync_inc(t->timeline, 1) == 0);
        CHECK(close(f) == 0);
    }
    return NULL;
}

static void consumer_producers(void) {
    const int iterations = 256 * g_scale;
    int tl = timeline_open();
    REQUIRE(tl >= 0);
    uint32_t counter = 0;
    pthread_t th[kThreads];
    struct turn turns[kThreads];
    for (int i = 0; i < kThreads; i++) {
        turns[i] = (struct turn){.timeline = tl, .id = i, .iterations = iterations, .counter = &counter};
        REQUIRE(pthread_create(&th[i], NULL, consumer_producer, &turns[i]) == 0);
    }
    for (int i = 0; i < kThreads; i++)
        pthread_join(th[i], NULL);
    CHECK(counter == (uint32_t)(kThreads * iterations));
    CHECK(close(tl) == 0);
}

/* ---- producers and one consumer ---- */
static int g_cons_tl;
static int g_prod_tl[kThreads];
static uint32_t g_produced;

static void* producer(void* arg) {
    const int id = (int)(intptr_t)arg;
    for (uint32_t seqno = 0;; seqno++) {
        int f = sw_sync_create_fence(g_cons_tl, seqno);
        if (f < 0)
            break; /* the consumer closed its timeline */
        /* Either wait through poll, or by asking for the status until it is not pending (the
         * fence may end with an error when the consumer closes its timeline). */
        if (id % 2) {
            CHECK(wait_fence(f, -1));
        } else {
            while (count_status(f, 0) > 0)
                sched_yield();
        }
        __atomic_add_fetch(&g_produced, 1, __ATOMIC_ACQ_REL);
        CHECK(sw_sync_inc(g_prod_tl[id], 1) == 0);
        CHECK(close(f) == 0);
    }
    return NULL;
}

static void producers_one_consumer(void) {
    g_cons_tl = timeline_open();
    REQUIRE(g_cons_tl >= 0);
    for (int i = 0; i < kThreads; i++) {
        g_prod_tl[i] = timeline_open();
        REQUIRE(g_prod_tl[i] >= 0);
    }
    pthread_t th[kThreads];
    for (int i = 0; i < kThreads; i++)
        REQUIRE(pthread_create(&th[i], NULL, producer, (void*)(intptr_t)i) == 0);
    for (uint32_t seqno = 1; seqno <= (uint32_t)(128 * g_scale); seqno++) {
        int f = sw_sync_create_fence(g_prod_tl[0], seqno);
        REQUIRE(f >= 0);
        for (int i = 1; i < kThreads; i++) {
            int tmp = sw_sync_create_fence(g_prod_tl[i], seqno);
            int merged = merge(tmp, f);
            CHECK(tmp >= 0 && merged >= 0);
            close(tmp);
            close(f);
            f = merged;
        }
        CHECK(wait_fence(f, 5000));
        CHECK(__atomic_load_n(&g_produced, __ATOMIC_ACQUIRE) == kThreads * seqno);
        CHECK(sw_sync_inc(g_cons_tl, 1) == 0);
        CHECK(close(f) == 0);
    }
    /* Closing the consumer's timeline signals the producers' pending fences (with an error) and
     * makes their next CREATE_FENCE fail: they exit. */
    CHECK(close(g_cons_tl) == 0);
    for (int i = 0; i < kThreads; i++) {
        pthread_join(th[i], NULL);
        CHECK(close(g_prod_tl[i]) == 0);
    }
}

/* ---- merges across timelines, counted fence by fence ---- */
static void counted_merges(void) {
    for (int round = 0; round < 16 * g_scale; round++) {
        int tl[3], in[3];
        for (int i = 0; i < 3; i++) {
            tl[i] = timeline_open();
            REQUIRE(tl[i] >= 0);
            in[i] = sw_sync_create_fence(tl[i], 5);
        }
        int m01 = merge(in[0], in[1]);
        int merged = merge(in[2], m01);
        int same = merge(in[0], in[0]);
        CHECK(count_status(merged, 0) == 3 && count_status(same, 0) == 1);
        for (int i = 0; i < 3; i++) {
            CHECK(sw_sync_inc(tl[i], 5) == 0);
            CHECK(count_status(merged, 1) == i + 1);
        }
        CHECK(count_status(same, 1) == 1 && wait_fence(merged, 100));
        int fds[] = {in[0], in[1], in[2], m01, merged, same, tl[0], tl[1], tl[2]};
        for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
            CHECK(close(fds[i]) == 0);
    }
}

/* ---- merges of an expired fence ---- */
static void expired_merges(void) {
    int tl = timeline_open();
    REQUIRE(tl >= 0);
    CHECK(sw_sync_inc(tl, 100) == 0);
    int expired = sw_sync_create_fence(tl, 1);
    REQUIRE(expired >= 0);
    CHECK(wait_fence(expired, 0));
    for (int i = 0; i < 2000 * g_scale; i++) {
        int f = merge(expired, expired);
        CHECK(f >= 0 && wait_fence(f, -1));
        CHECK(close(f) == 0);
    }
    CHECK(close(expired) == 0);
    CHECK(close(tl) == 0);
}

int main(int argc, char** argv) {
    if (getenv("UPANTHOR_STRESS_SCALE"))
        g_scale = atoi(getenv("UPANTHOR_STRESS_SCALE")) > 0 ? atoi(getenv("UPANTHOR_STRESS_SCALE")) : 1;
    const char* only = argc > 1 ? argv[1] : NULL;
    if (!only || !strcmp(only, "consumers"))
        consumers();
    if (!only || !strcmp(only, "consumer_producers"))
        consumer_producers();
    if (!only || !strcmp(only, "producers"))
        producers_one_consumer();
    if (!only || !strcmp(only, "merges"))
        expired_merges();
    if (!only || !strcmp(only, "counted"))
        counted_merges();
    return client_result("thread_exit_client");
}
