// libupanthor_preload.so: load and unload (docs/preload.md). The driver itself boots on the first
// open of a node (device.cpp) and is removed by an atexit handler registered then.
#include "tools/preload/fake_fs.h"
#include "tools/preload/libc_next.h"

namespace {

__attribute__((constructor)) void preload_init() {
    (void)upanthor::preload::libc();
}

__attribute__((destructor)) void preload_fini() {
    upanthor::preload::fake_fs_cleanup();
}

}  // namespace
