// Host CPU placement for the real-mode benchmarks: which CPUs the process may use, and pinning
// the calling thread (and the threads it creates from then on, which inherit its affinity).
#pragma once
#include <sched.h>

#include <vector>

namespace upanthor_bench {

// The CPUs this process may use, in order.
inline std::vector<int> allowed_cpus() {
    cpu_set_t set;
    sched_getaffinity(0, sizeof(set), &set);
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            cpus.push_back(cpu);
    return cpus;
}

// Restricts the calling thread (and the threads it creates from now on) to one CPU.
inline void pin_this_thread(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);
}

// The calling thread's affinity, restored when this goes out of scope.
class SavedAffinity {
public:
    SavedAffinity() { sched_getaffinity(0, sizeof(saved_), &saved_); }
    ~SavedAffinity() { sched_setaffinity(0, sizeof(saved_), &saved_); }
    SavedAffinity(const SavedAffinity&) = delete;
    SavedAffinity& operator=(const SavedAffinity&) = delete;

private:
    cpu_set_t saved_;
};

}  // namespace upanthor_bench
