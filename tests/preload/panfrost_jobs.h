/* Job descriptors of a Job Manager Mali GPU (Bifrost, Mesa's descriptor version 6/7), in C, for
 * the preload's panfrost clients: what SUBMIT's `jc` points at. The same layout as
 * hw/jm/job_desc.h (and IGT's lib/panfrost-job.h): a job is a 32-byte header followed by its
 * payload at +0x20; the GPU walks the chain through `next` until it reads 0. Little-endian. */
#ifndef UPANTHOR_TESTS_PRELOAD_PANFROST_JOBS_H
#define UPANTHOR_TESTS_PRELOAD_PANFROST_JOBS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pan_job_header {
    uint32_t exception_status;      /* 0 before the GPU ran it; 1 (done) after, else a fault code */
    uint32_t first_incomplete_task; /* written by the GPU */
    uint64_t fault_pointer;         /* written by the GPU on a fault */
    uint32_t control;               /* [0] 64-bit next, [7:1] type, [8] barrier, [31:16] index */
    uint16_t dependency_1;          /* index of a job of the chain to wait for; 0 none */
    uint16_t dependency_2;
    uint64_t next; /* the next job's GPU VA; 0 ends the chain */
};
_Static_assert(sizeof(struct pan_job_header) == 32 && offsetof(struct pan_job_header, control) == 0x10 &&
                   offsetof(struct pan_job_header, next) == 0x18,
               "job header layout");

#define PAN_JOB_DONE 1u /* exception_status of a completed job */

#define PAN_JOB_TYPE_NULL 1u
#define PAN_JOB_TYPE_WRITE_VALUE 2u

#define PAN_JOB_IS_64B (1u << 0)
#define PAN_JOB_BARRIER (1u << 8)
#define PAN_JOB_INVALIDATE_CACHE (1u << 9)
#define PAN_JOB_SUPPRESS_PREFETCH (1u << 11)
/* Word 4 of a job of `type`, index `index` in its chain, with a 64-bit `next`. */
static inline uint32_t pan_job_control(uint32_t type, uint32_t index) {
    return PAN_JOB_IS_64B | (type << 1) | (index << 16);
}

/* WRITE_VALUE: the GPU writes `immediate` (or a counter) to `address`, through the job's VM. */
#define PAN_WRITE_VALUE_IMMEDIATE32 6u
#define PAN_WRITE_VALUE_IMMEDIATE64 7u
struct pan_write_value_payload {
    uint64_t address;
    uint32_t type; /* PAN_WRITE_VALUE_* */
    uint32_t reserved;
    uint64_t immediate;
};
_Static_assert(sizeof(struct pan_write_value_payload) == 24 &&
                   offsetof(struct pan_write_value_payload, immediate) == 16,
               "write-value payload layout");

struct pan_write_value_job {
    struct pan_job_header header;
    struct pan_write_value_payload payload; /* at +0x20 */
};
_Static_assert(offsetof(struct pan_write_value_job, payload) == 0x20, "payload offset");

#define PAN_JOB_ALIGN 64u /* Bifrost jobs sit on 64-byte boundaries */

/* Lays a WRITE_VALUE job out in `job` (CPU address; the GPU sees it at the VA the caller knows):
 * write `value` (64-bit) at `target`, then go on with the job at `next` (0: end of the chain). */
static inline void pan_emit_write_value(struct pan_write_value_job* job, uint64_t target, uint64_t value,
                                        uint64_t next) {
    memset(job, 0, sizeof(*job));
    job->header.control = pan_job_control(PAN_JOB_TYPE_WRITE_VALUE, 1);
    job->header.next = next;
    job->payload.address = target;
    job->payload.type = PAN_WRITE_VALUE_IMMEDIATE64;
    job->payload.immediate = value;
}

/* IGT's endless loop (tests/panfrost/panfrost_submit.c "pan-reset"): two WRITE_VALUE jobs at VAs
 * a and b that point at each other, each zeroing the other's exception_status (a 32-bit write of
 * 0 to the other's header), so neither is ever "already done" when the GPU comes back to it. The
 * chain never ends: only the job timeout and a reset stop it. */
static inline void pan_emit_endless_loop(struct pan_write_value_job* a, uint64_t a_va, struct pan_write_value_job* b,
                                         uint64_t b_va) {
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    a->header.control = pan_job_control(PAN_JOB_TYPE_WRITE_VALUE, 1) | PAN_JOB_BARRIER | PAN_JOB_INVALIDATE_CACHE |
                        PAN_JOB_SUPPRESS_PREFETCH;
    b->header.control = a->header.control;
    a->header.next = b_va;
    b->header.next = a_va;
    a->payload.address = b_va; /* b's exception_status */
    a->payload.type = PAN_WRITE_VALUE_IMMEDIATE32;
    b->payload.address = a_va;
    b->payload.type = PAN_WRITE_VALUE_IMMEDIATE32;
}

#endif
