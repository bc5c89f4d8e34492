/* Shared by the C clients the preload tests run: CHECK records a failure and goes on, REQUIRE
 * stops the program; both print the condition, where, and errno, and evaluate it once (it may
 * create a thread or open a file). CHECK may be used from several threads. */
#pragma once
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int client_failures;

#define CLIENT_REPORT_(cond) \
    fprintf(stderr, "%s:%d: CHECK failed: %s (errno %d %s)\n", __FILE__, __LINE__, #cond, errno, strerror(errno))
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            CLIENT_REPORT_(cond);                                      \
            __atomic_add_fetch(&client_failures, 1, __ATOMIC_RELAXED); \
        }                                                              \
    } while (0)
#define REQUIRE(cond)             \
    do {                          \
        if (!(cond)) {            \
            CLIENT_REPORT_(cond); \
            exit(1);              \
        }                         \
    } while (0)

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits until thread `tid` of this process is asleep (blocked in a wait; state S or D in
 * /proc), or `ms` of host time passed: so that a test exercises the path where the waiter is
 * already blocked, without a sleep that only makes it likely. 0 when it blocked. */
static inline int wait_until_blocked(int tid, int ms) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    const int64_t deadline = now_ns() + (int64_t)ms * 1000000;
    while (now_ns() < deadline) {
        FILE* f = fopen(path, "r");
        char buf[512] = {0};
        const size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        const char* paren = n ? strrchr(buf, ')') : NULL;
        if (paren && (paren[2] == 'S' || paren[2] == 'D'))
            return 0;
        sched_yield();
    }
    return -1;
}

/* main's return value: 0 with "<name>: all checks passed" (what CTest looks for), else 1. */
static inline int client_result(const char* name) {
    if (__atomic_load_n(&client_failures, __ATOMIC_RELAXED))
        return 1;
    printf("%s: all checks passed\n", name);
    return 0;
}
