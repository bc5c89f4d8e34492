// The client's half of a mapping the kernel side set up (in-process or in the server): the BO's
// pages from the arena's memfd, or a read-only snapshot of an I/O page.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace upanthor::preload {

// mmap(2) of the BO's pages at `arena_off` of `arena_fd` (MAP_SHARED, so the client and the GPU
// share the very pages), or, for arena_off < 0, a private read-only page holding `io_word` at
// offset 0 (the USER_FLUSH_ID page: a stale flush ID only makes the firmware flush more than it
// needs to). The placement flags of `flags` are kept. MAP_FAILED with errno on failure.
void* map_client_side(void* addr, size_t len, int prot, int flags, int arena_fd, off_t arena_off, unsigned io_word);

}  // namespace upanthor::preload
