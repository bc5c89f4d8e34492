// sw_sync is drivers/dma-buf/sw_sync.c: kernel_shim/dma-buf/sw_sync.h. The names its DRM-side
// users and tests know it by.
#pragma once
#include "kernel_shim/dma-buf/sw_sync.h"

namespace drm {
using kshim::dma_fence_to_sync_pt;
using kshim::sw_sync_debugfs_open;
using kshim::sw_sync_debugfs_release;
using kshim::sw_sync_ioctl;
using kshim::sw_sync_open_file;
using kshim::sw_sync_timeline;
using kshim::sw_sync_timelines_live;
using kshim::sync_pt;
using kshim::sync_pt_create;
using kshim::sync_timeline;
using kshim::sync_timeline_signal;
}  // namespace drm
