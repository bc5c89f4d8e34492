// Mirrors drivers/gpu/drm/panthor/panthor_sched.c for what part 1 of the driver needs: the
// scheduler's init computes csif_info from the firmware interfaces (as upstream's does) and
// marks the device initialized; the reset/suspend/fault hooks do nothing until part 2 adds the
// CSF scheduler behind them.
#include "panthor/panthor_sched.h"

#include <algorithm>

#include "kernel_shim/devres.h"
#include "kernel_shim/slab.h"
#include "panthor/panthor_fw.h"
#include "panthor/regs/job_regs.h"

namespace panthor {

// MAX_CSG_PRIO + 1: CSG priorities are 4 bits, so at most 16 slots can be told apart.
inline constexpr u32 MAX_CSG_PRIO = 0xF;

struct panthor_scheduler {
    u32 csg_slot_count = 0;
    u32 cs_slot_count = 0;
    u32 sb_slot_count = 0;
};

int panthor_sched_init(panthor_device* ptdev) {
    panthor_fw_global_iface* glb = panthor_fw_get_glb_iface(ptdev);
    panthor_fw_csg_iface* csg = panthor_fw_get_csg_iface(ptdev, 0);
    panthor_fw_cs_iface* cs = panthor_fw_get_cs_iface(ptdev, 0, 0);

    auto* sched = kshim::knew<panthor_scheduler>(kshim::GFP_KERNEL);
    if (!sched)
        return -ENOMEM;
    int ret = kshim::devm_add_action_or_reset(ptdev->dev, [ptdev, sched] {
        ptdev->scheduler = nullptr;
        kshim::kdelete(sched);
    });
    if (ret)
        return ret;

    const u32 num_groups = std::min({glb->control->group_num, MAX_CSGS, MAX_CSG_PRIO + 1});
    sched->csg_slot_count = num_groups;
    sched->cs_slot_count = csg->control->stream_num;
    sched->sb_slot_count = CS_FEATURES_SCOREBOARDS(cs->control->features);

    ptdev->csif_info.csg_slot_count = sched->csg_slot_count;
    ptdev->csif_info.cs_slot_count = sched->cs_slot_count;
    ptdev->csif_info.cs_reg_count = CS_FEATURES_WORK_REGS(cs->control->features);
    ptdev->csif_info.scoreboard_slot_count = sched->sb_slot_count;
    ptdev->csif_info.unpreserved_cs_reg_count = CSF_UNPRESERVED_REG_COUNT;

    ptdev->scheduler = sched;
    return 0;
}

void panthor_sched_unplug(panthor_device*) {}
void panthor_sched_suspend(panthor_device*) {}
void panthor_sched_resume(panthor_device*) {}
void panthor_sched_pre_reset(panthor_device*) {}
void panthor_sched_post_reset(panthor_device*, bool) {}
void panthor_sched_report_mmu_fault(panthor_device*) {}
void panthor_sched_report_fw_events(panthor_device*, u32) {}

}  // namespace panthor
