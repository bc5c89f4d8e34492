// Placeholder until the scheduler checks land: might_alloc without might_sleep/lockdep.
#include "kernel_shim/gfp.h"
namespace kshim {
void might_alloc(gfp_t) {}
}
