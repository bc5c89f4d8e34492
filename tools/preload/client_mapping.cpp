// The client's half of a mapping (client_mapping.h).
#include "tools/preload/client_mapping.h"

#include <sys/mman.h>

#include "tools/preload/libc_next.h"

namespace upanthor::preload {

void* map_client_side(void* addr, size_t len, int prot, int flags, int arena_fd, off_t arena_off, unsigned io_word) {
    const int keep = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_POPULATE | MAP_NORESERVE | MAP_LOCKED);
    if (arena_off >= 0)
        return libc().mmap(addr, len, prot, MAP_SHARED | keep, arena_fd, arena_off);
    void* p = libc().mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | keep, -1, 0);
    if (p != MAP_FAILED) {
        *static_cast<unsigned*>(p) = io_word;
        mprotect(p, len, PROT_READ);
    }
    return p;
}

}  // namespace upanthor::preload
