// A host thread the runtime did not start (a client's thread, a server connection's thread)
// becoming a kernel task, so the kernel code it calls can lock, sleep and be woken.
#pragma once

namespace kshim {
struct Task;
}

namespace upanthor::preload {

// A new task for the calling thread, made current. Its ids come from a range of their own (not
// Backend::next_task_id(), which the real backend calls under its own task lock), so trace
// tracks stay apart. Undo with host_task_detach on the same thread.
kshim::Task* host_task_attach(const char* name);
// The calling thread's task `t` (host_task_attach's) stops being current and is freed.
void host_task_detach(kshim::Task* t);

}  // namespace upanthor::preload
