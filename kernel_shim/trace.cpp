// The trace sink: Chrome trace-event JSON (the format ui.perfetto.dev and chrome://tracing read).
#include "kernel_shim/trace.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "kernel_shim/runtime.h"

namespace kshim::trace {

std::atomic<bool> g_enabled{false};

namespace {
struct Event {
    ktime_t ts;
    char ph;
    u32 tid;
    std::string name;
    const char* cat;
    u64 id;
    double value;
    std::string args;
};

constexpr u32 kFirstHwTrack = 1000000;

std::mutex g_lock;  // protects everything below
std::vector<Event> g_events;
std::map<u32, std::string> g_names;
std::map<std::string, u32> g_tracks;

u32 current_tid() {
    Task* t = current();
    return t ? t->id : 0;
}

void push(char ph, u32 tid, std::string name, const char* cat, u64 id = 0, double value = 0, std::string args = {}) {
    ktime_t ts = ktime_get();
    std::lock_guard g(g_lock);
    g_events.push_back({ts, ph, tid, std::move(name), cat, id, value, std::move(args)});
}

std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\')
            o += '\\';
        if (static_cast<unsigned char>(c) < 0x20)
            continue;
        o += c;
    }
    return o;
}
}  // namespace

void start(bool enable) {
    clear();
    g_enabled.store(enable);
}

void stop() {
    g_enabled.store(false);
}
void set_enabled(bool on) {
    g_enabled.store(on);
}

void clear() {
    std::lock_guard g(g_lock);
    g_events.clear();
    g_names.clear();
    g_tracks.clear();
    g_names[0] = "softirq";
}

void task_name(u32 tid, const char* name) {
    std::lock_guard g(g_lock);
    g_names[tid] = name;
}

u32 track(const std::string& name) {
    std::lock_guard g(g_lock);
    auto it = g_tracks.find(name);
    if (it != g_tracks.end())
        return it->second;
    u32 id = kFirstHwTrack + static_cast<u32>(g_tracks.size());
    g_tracks[name] = id;
    g_names[id] = name;
    return id;
}

void begin(const char* name, const char* cat) {
    if (enabled())
        push('B', current_tid(), name, cat);
}
void end(const char* name, const char* cat) {
    if (enabled())
        push('E', current_tid(), name, cat);
}
void begin_on(u32 track_id, const std::string& name, const char* cat) {
    if (enabled())
        push('B', track_id, name, cat);
}
void end_on(u32 track_id, const std::string& name, const char* cat) {
    if (enabled())
        push('E', track_id, name, cat);
}
void instant(const char* name, const char* cat, const std::string& args) {
    if (enabled())
        push('i', current_tid(), name, cat, 0, 0, args);
}
void counter(const char* name, double value) {
    if (enabled())
        push('C', 0, name, "counter", 0, value);
}
void async_begin(const char* name, u64 id, const char* cat, const std::string& args) {
    if (enabled())
        push('b', current_tid(), name, cat, id, 0, args);
}
void async_end(const char* name, u64 id, const char* cat) {
    if (enabled())
        push('e', current_tid(), name, cat, id);
}

size_t event_count() {
    std::lock_guard g(g_lock);
    return g_events.size();
}

std::string to_json() {
    std::lock_guard g(g_lock);
    std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
        if (!first)
            out += ",\n";
        first = false;
    };
    for (auto& [tid, name] : g_names) {
        sep();
        out += "{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(tid) +
               ",\"name\":\"thread_name\",\"args\":{\"name\":\"" + escape(name) + "\"}}";
    }
    char ts[64];
    for (const Event& e : g_events) {
        sep();
        std::snprintf(ts, sizeof ts, "%lld.%03lld", static_cast<long long>(e.ts / 1000),
                      static_cast<long long>(e.ts % 1000));
        out += "{\"ph\":\"" + std::string(1, e.ph) + "\",\"pid\":1,\"tid\":" + std::to_string(e.tid) + ",\"ts\":" + ts +
               ",\"name\":\"" + escape(e.name) + "\",\"cat\":\"" + e.cat + "\"";
        if (e.ph == 'b' || e.ph == 'e')
            out += ",\"id\":\"0x" + std::to_string(e.id) + "\"";
        if (e.ph == 'i')
            out += ",\"s\":\"t\"";
        if (e.ph == 'C')
            out += ",\"args\":{\"value\":" + std::to_string(e.value) + "}";
        else if (!e.args.empty())
            out += ",\"args\":" + e.args;
        out += "}";
    }
    out += "\n]}\n";
    return out;
}

bool write_json(const std::string& path) {
    std::string json = to_json();
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f)
        return false;
    bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
    return std::fclose(f) == 0 && ok;
}

}  // namespace kshim::trace
