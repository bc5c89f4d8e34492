// Thrown out of a blocking call in simulated mode when the simulation must unwind a task (a
// deadlock was found). Tests see it as a failure; kernel code never catches it.
#pragma once

namespace kshim {
struct SimAbort {};
}  // namespace kshim
