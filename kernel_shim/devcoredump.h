// Mirrors include/linux/devcoredump.h and drivers/base/devcoredump.c: a driver hands over a
// snapshot of a failing device; it stays readable until it is read and cleared or times out.
//
// DOC: The kernel creates a "devcdN" device per dump whose `data` file reads the snapshot; a
// write to that file frees it, and so does a 5-minute timer (DEVCD_TIMEOUT); while a dump of a
// failing device exists, further dumps of that device are dropped (their data freed at once).
// udev hears of a new dump through the KOBJ_ADD uevent. Here there is no sysfs: the `data` file
// is devcd_read()/dev_coredump_clear() keyed by the failing device, and the uevent is a listener
// a host program installs (devcoredump_set_listener), called from a work item, never from the
// context that took the dump, so it may read, clear and sleep. The dump functions themselves
// neither sleep nor block when `gfp` does not allow it: they may be called from atomic context.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <functional>

#include "kernel_shim/device.h"
#include "kernel_shim/gfp.h"
#include "kernel_shim/time.h"

namespace kshim {

// How long a dump stays if nobody clears it (the kernel's DEVCD_TIMEOUT).
inline constexpr unsigned long DEVCD_TIMEOUT = HZ * 60 * 5;

// read(buffer, offset, count, data, datalen): copies up to count bytes of the dump from offset;
// returns the bytes copied (0 past the end). free(data) releases the driver's data.
using devcd_read_fn = ssize_t (*)(char* buffer, loff_t offset, size_t count, void* data, size_t datalen);
using devcd_free_fn = void (*)(void* data);

// Takes ownership of `data` (from kmalloc/kzalloc; freed with kfree) in every case: stored, or
// freed at once when the device already has a dump pending, dumps are disabled, or the
// bookkeeping cannot be allocated with `gfp`.
void dev_coredumpv(Device* dev, void* data, size_t datalen, gfp_t gfp);
// The same with the driver's own reader and destructor.
void dev_coredumpm(Device* dev, void* data, size_t datalen, gfp_t gfp, devcd_read_fn read, devcd_free_fn free);
void dev_coredumpm_timeout(Device* dev, void* data, size_t datalen, gfp_t gfp, devcd_read_fn read, devcd_free_fn free,
                           unsigned long timeout);

// Removes the device's pending dump at once, freeing it (upstream's dev_coredump_put, which
// drivers call when the failing device goes away). Sleeps: waits for its work items. Must not be
// called from the listener of that same dump (use dev_coredump_clear there).
void dev_coredump_put(Device* dev);

// ---- the `data` file of the dump's devcd device -------------------------------------------------

// Whether `dev` has a dump pending (the devcd device exists and was not written to).
bool dev_coredump_pending(const Device* dev);
// Size of the pending dump, or -ENOENT.
ssize_t devcd_size(const Device* dev);
// Reads up to count bytes from offset: the bytes copied (0 at or past the end), -ENOENT when no
// dump is pending, -EINVAL for a negative offset.
ssize_t devcd_read(Device* dev, char* buffer, loff_t offset, size_t count);
// A write to `data`: the dump stops being pending now (a new one may be taken) and is freed by
// its work item, as the kernel does with mod_delayed_work(del_wk, 0). -ENOENT when none.
int dev_coredump_clear(Device* dev);

// /sys/class/devcoredump/disabled: while set, new dumps are dropped. Upstream cannot re-enable
// once disabled (a security choice); tests and the simulator can, to stay independent.
void devcoredump_set_disabled(bool disabled);

// The uevent: called, in a work item, once per dump taken, with the failing device. nullptr
// removes it. The listener may read and clear the dump and may sleep.
void devcoredump_set_listener(std::function<void(Device*)> listener);

// Dumps allocated and not freed yet (pending or being freed), over every device.
size_t devcoredump_live_count();

}  // namespace kshim
