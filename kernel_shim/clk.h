// Mirrors include/linux/clk.h and regulator/consumer.h: the clock and regulator services a driver
// of a platform device uses. They record rate, voltage and prepare/enable state; tests read them.
#pragma once
#include "kernel_shim/device.h"
#include "kernel_shim/types.h"

namespace kshim {

struct Clk {
    const char* name = nullptr;
    unsigned long rate = 0;
    int prepare_count = 0;
    int enable_count = 0;
    int fail_next_enable = 0;  // tests: the next enable returns this errno (then resets to 0)
};

// The device's clock `id`, or ERR_PTR(-ENOENT) with an error line. The _optional form returns
// nullptr for a missing clock. Every clk_* function accepts nullptr as a no-op clock.
Clk* devm_clk_get(Device* dev, const char* id);
Clk* devm_clk_get_optional(Device* dev, const char* id);
int clk_prepare(Clk* clk);
void clk_unprepare(Clk* clk);
int clk_enable(Clk* clk);
void clk_disable(Clk* clk);
int clk_prepare_enable(Clk* clk);
void clk_disable_unprepare(Clk* clk);
unsigned long clk_get_rate(Clk* clk);
int clk_set_rate(Clk* clk, unsigned long rate);

struct Regulator {
    const char* name = nullptr;
    int microvolt = 0;
    int enable_count = 0;
    int fail_next_enable = 0;       // tests
    int fail_next_set_voltage = 0;  // tests: the next regulator_set_voltage returns this errno
};

// ERR_PTR(-ENODEV) when the device has no such supply.
Regulator* devm_regulator_get(Device* dev, const char* id);
int regulator_enable(Regulator* reg);
int regulator_disable(Regulator* reg);
int regulator_is_enabled(Regulator* reg);
int regulator_set_voltage(Regulator* reg, int min_uv, int max_uv);
int regulator_get_voltage(Regulator* reg);

}  // namespace kshim
