// Mirrors include/linux/interrupt.h: threaded, level-triggered interrupt lines.
//
// A device model drives an IrqLine's level. While the line is asserted and enabled, the
// line's IRQ task runs the hard handler in hard-IRQ context (might_sleep fires there); if it
// returns IRQ_WAKE_THREAD the thread function runs next, in task context, with the line masked
// (IRQF_ONESHOT behaviour), and the line is unmasked afterwards. A line that stays asserted
// fires again; 100,000 unhandled interrupts in a row disable it ("nobody cared"), and so do
// 1,000,000 handled ones at one instant (a handler that never deasserts the line would
// otherwise spin forever in simulated time).
#pragma once
#include <functional>
#include <mutex>
#include <string>

#include "kernel_shim/wait.h"

namespace kshim {

enum irqreturn_t { IRQ_NONE = 0, IRQ_HANDLED = 1 << 0, IRQ_WAKE_THREAD = 1 << 1 };
using irq_handler_t = std::function<irqreturn_t(int irq, void* dev_id)>;

inline constexpr unsigned long IRQF_SHARED = 0x80;
inline constexpr unsigned long IRQF_ONESHOT = 0x2000;

class IrqLine {
public:
    explicit IrqLine(std::string name, int number = 0) : name_(std::move(name)), number_(number) {}
    IrqLine(const IrqLine&) = delete;
    IrqLine& operator=(const IrqLine&) = delete;
    ~IrqLine();

    // Device side: the level of the wire.
    void set_level(bool asserted);
    bool level() const;

    int number() const { return number_; }
    const std::string& name() const { return name_; }
    // Disabled (disable_irq) or masked while the thread function runs.
    bool masked() const;
    // How many times the hard handler ran.
    u64 handled_count() const;

private:
    friend int request_threaded_irq(IrqLine*, irq_handler_t, irq_handler_t, unsigned long, const char*, void*);
    friend void free_irq(IrqLine*, void*);
    friend void disable_irq_nosync(IrqLine*);
    friend void enable_irq(IrqLine*);
    friend void synchronize_irq(IrqLine*);

    void irq_thread();
    // Out of line, so that the report's strings do not enlarge irq_thread's frame (ASan clears
    // it at every interrupt).
    [[gnu::noinline, gnu::cold]] void report_line_disabled(const char* what, const char* detail) const;
    bool can_fire_locked() const { return level_ && depth_ == 0 && !oneshot_masked_; }

    std::string name_;
    int number_;
    mutable std::mutex lock_;  // protects everything below
    bool level_ = false;
    bool requested_ = false;
    bool stopping_ = false;
    int depth_ = 0;  // disable_irq nesting
    bool oneshot_masked_ = false;
    bool in_handler_ = false;
    u64 count_ = 0;
    u64 unhandled_ = 0;
    u64 same_instant_ = 0;  // invocations since the clock last moved
    ktime_t last_fire_ = -1;
    irq_handler_t handler_;
    irq_handler_t thread_fn_;
    void* dev_id_ = nullptr;
    Task* task_ = nullptr;
    wait_queue_head idle_wq_;  // synchronize_irq waits here
};

// handler null: the default primary handler (wake the thread). thread_fn null: hard handler only.
// -EBUSY if the line already has a handler, -EINVAL if both are null.
int request_threaded_irq(IrqLine* line, irq_handler_t handler, irq_handler_t thread_fn, unsigned long flags,
                         const char* name, void* dev_id);
inline int request_irq(IrqLine* line, irq_handler_t handler, unsigned long flags, const char* name, void* dev_id) {
    return request_threaded_irq(line, std::move(handler), nullptr, flags, name, dev_id);
}
void free_irq(IrqLine* line, void* dev_id);
void disable_irq_nosync(IrqLine* line);
// Disables and waits for a running handler (hard or threaded) to finish.
void disable_irq(IrqLine* line);
void enable_irq(IrqLine* line);
void synchronize_irq(IrqLine* line);

}  // namespace kshim
