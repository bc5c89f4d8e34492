/* Signals during driver waits, run with libupanthor_preload.so in LD_PRELOAD (issue #18): a
 * SIGALRM that arrives while DRM_IOCTL_SYNCOBJ_WAIT sleeps ends the ioctl with EINTR when the
 * handler has no SA_RESTART, and the re-issued ioctl still ends at its absolute deadline; with
 * SA_RESTART the ioctl restarts by itself; libdrm's drmSyncobjWait retries through EINTR; a
 * blocked signal interrupts nothing; the handler runs after the ioctl unwound, so it may itself
 * make driver calls; sigaction reports the program's own handler back. Exit 0 on success. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"

#define MS 1000000LL
/* A wait's deadline is in jiffies: the kernel may end it up to one jiffy (10 ms at HZ=100) early. */
#define JIFFY (10 * MS)
/* Generous: the machine may be loaded; the checks are about which side of a deadline we are. */
#define LATE (1000 * MS)

static volatile sig_atomic_t handled;
static volatile sig_atomic_t handler_ioctl_ok = -1;
static int g_drm = -1;

static void on_alarm(int sig) {
    (void)sig;
    handled++;
}

/* Runs after the interrupted ioctl has unwound (as the kernel runs handlers on the way back to
 * user space), so a driver call from here does not meet the interrupted one's locks. */
static void on_alarm_with_ioctl(int sig) {
    (void)sig;
    handled++;
    drmVersionPtr v = drmGetVersion(g_drm);
    handler_ioctl_ok = v && strcmp(v->name, "panthor") == 0;
    drmFreeVersion(v);
}

static void install(void (*fn)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    REQUIRE(sigaction(SIGALRM, &sa, NULL) == 0);
}

static void alarm_in_ms(int ms) {
    struct itimerval it;
    memset(&it, 0, sizeof(it));
    it.it_value.tv_sec = ms / 1000;
    it.it_value.tv_usec = (ms % 1000) * 1000;
    REQUIRE(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

/* A raw ioctl, not drmIoctl (which retries on EINTR). */
static int raw_wait(uint32_t* handle, int64_t deadline) {
    struct drm_syncobj_wait w;
    memset(&w, 0, sizeof(w));
    w.handles = (uintptr_t)handle;
    w.count_handles = 1;
    w.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    w.timeout_nsec = deadline;
    return ioctl(g_drm, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

int main(void) {
    g_drm = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(g_drm >= 0);
    uint32_t h;
    REQUIRE(drmSyncobjCreate(g_drm, 0, &h) == 0); /* no fence: only the deadline ends a wait */

    /* 1. No SA_RESTART: EINTR, and the re-issued call ends at the same absolute deadline. */
    install(on_alarm, 0);
    handled = 0;
    int64_t t0 = now_ns();
    int64_t deadline = t0 + 400 * MS;
    alarm_in_ms(50);
    errno = 0;
    CHECK(raw_wait(&h, deadline) == -1 && errno == EINTR);
    CHECK(handled == 1);
    CHECK(now_ns() < deadline);
    errno = 0;
    CHECK(raw_wait(&h, deadline) == -1 && errno == ETIME);
    CHECK(now_ns() >= deadline - JIFFY && now_ns() < deadline + LATE);
    CHECK(handled == 1);

    /* 2. SA_RESTART: the ioctl restarts by itself and ends at the deadline, not later. */
    install(on_alarm, SA_RESTART);
    handled = 0;
    deadline = now_ns() + 300 * MS;
    alarm_in_ms(50);
    errno = 0;
    CHECK(raw_wait(&h, deadline) == -1 && errno == ETIME);
    CHECK(handled == 1);
    CHECK(now_ns() >= deadline - JIFFY && now_ns() < deadline + LATE);

    /* 3. libdrm's drmSyncobjWait goes round EINTR itself: ETIME at the deadline. */
    install(on_alarm, 0);
    handled = 0;
    deadline = now_ns() + 300 * MS;
    alarm_in_ms(50);
    CHECK(drmSyncobjWait(g_drm, &h, 1, deadline, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL) == -ETIME);
    CHECK(handled == 1);
    CHECK(now_ns() >= deadline - JIFFY);

    /* 4. A blocked signal interrupts nothing; it is handled once unblocked. */
    sigset_t alrm, old;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    handled = 0;
    REQUIRE(sigprocmask(SIG_BLOCK, &alrm, &old) == 0);
    deadline = now_ns() + 200 * MS;
    alarm_in_ms(30);
    errno = 0;
    CHECK(raw_wait(&h, deadline) == -1 && errno == ETIME);
    CHECK(handled == 0);
    REQUIRE(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
    CHECK(handled == 1);

    /* 5. The handler of an interrupted ioctl may make driver calls itself. */
    install(on_alarm_with_ioctl, 0);
    handled = 0;
    deadline = now_ns() + 400 * MS;
    alarm_in_ms(50);
    errno = 0;
    CHECK(raw_wait(&h, deadline) == -1 && errno == EINTR);
    CHECK(handled == 1);
    CHECK(handler_ioctl_ok == 1);

    /* 6. Outside the driver a handler runs at once, and sigaction reports the program's own. */
    install(on_alarm, SA_RESTART);
    handled = 0;
    raise(SIGALRM);
    CHECK(handled == 1);
    struct sigaction cur;
    REQUIRE(sigaction(SIGALRM, NULL, &cur) == 0);
    CHECK(cur.sa_handler == on_alarm);
    CHECK((cur.sa_flags & (SA_RESTART | SA_SIGINFO)) == SA_RESTART);
    CHECK(signal(SIGALRM, SIG_DFL) == on_alarm);
    CHECK(signal(SIGALRM, SIG_IGN) == SIG_DFL);

    CHECK(drmSyncobjDestroy(g_drm, h) == 0);
    CHECK(close(g_drm) == 0);
    return client_result("eintr_client");
}
