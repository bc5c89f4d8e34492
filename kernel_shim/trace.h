// The trace sink (docs/conventions.md, Observability): events in memory, written as Chrome
// trace-event JSON that opens in ui.perfetto.dev. One track per kernel thread (its task id), plus
// named tracks for hardware (CSG slots, MMU address spaces, the MCU). Timestamps come from the
// runtime clock, so a simulated run's trace is the same for the same seed.
#pragma once
#include <atomic>
#include <string>

#include "kernel_shim/types.h"

namespace kshim::trace {

extern std::atomic<bool> g_enabled;
inline bool enabled() {
    return g_enabled.load(std::memory_order_relaxed);
}

void start(bool enable);
void stop();
void set_enabled(bool on);
void clear();

void task_name(u32 tid, const char* name);
// A named track that is not a kernel thread (hardware blocks); returns its track id.
u32 track(const std::string& name);

// Slices on the current task's track (or `track_id`).
void begin(const char* name, const char* cat);
void end(const char* name, const char* cat);
void begin_on(u32 track_id, const std::string& name, const char* cat);
void end_on(u32 track_id, const std::string& name, const char* cat);
void instant(const char* name, const char* cat, const std::string& args_json = {});
void counter(const char* name, double value);
// Async slices (a job from submit to fence signal), matched by id.
void async_begin(const char* name, u64 id, const char* cat, const std::string& args_json = {});
void async_end(const char* name, u64 id, const char* cat);

struct Slice {
    Slice(const char* n, const char* c) : name(n), cat(c) {
        if (enabled())
            begin(name, cat);
    }
    ~Slice() {
        if (enabled())
            end(name, cat);
    }
    const char* name;
    const char* cat;
};

size_t event_count();
std::string to_json();
bool write_json(const std::string& path);

}  // namespace kshim::trace
