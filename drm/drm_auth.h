// Mirrors include/drm/drm_auth.h and drivers/gpu/drm/drm_auth.c: the DRM master and the
// authentication of primary-node clients.
//
// DOC: every file opened on the primary node belongs to a drm_master. The first such file
// opened while the device has no current master creates a master of its own and becomes the
// current master (drm_master_open); later openers share the current master. SET_MASTER and
// DROP_MASTER move the current master, allowed to a file that was master before, used by the
// process that opened it, or to a caller with CAP_SYS_ADMIN (drm_master_check_perm). A
// non-master client of the primary node is authenticated by its master: it takes a magic with
// GET_MAGIC, and the master passes it to AUTH_MAGIC. Render-node files have no master and need no
// authentication; drm_ioctl_permit (drm/drm_ioctl.cpp) applies the DRM_AUTH, DRM_MASTER,
// DRM_ROOT_ONLY and DRM_RENDER_ALLOW rules. No leases (no KMS).
#pragma once
#include "kernel_shim/kref.h"
#include "kernel_shim/xarray.h"

namespace drm {

class drm_device;
struct drm_file;

struct drm_master {
    kshim::kref refcount;
    drm_device* dev = nullptr;
    // Magics handed out by GET_MAGIC to this master's clients (idr from 1); an authenticated
    // client's entry stays reserved (as idr_replace with NULL) until its file is released.
    kshim::XArray<drm_file> magic_map{kshim::XA_FLAGS_ALLOC1};
};

// drm_is_current_master: fpriv is a master and its master is the device's current one.
bool drm_is_current_master(drm_file* fpriv);
drm_master* drm_master_get(drm_master* master);
// A reference to fpriv's master, or nullptr when it has none (a render-node file).
drm_master* drm_file_get_master(drm_file* fpriv);
// Drops the reference *master holds and clears it.
void drm_master_put(drm_master** master);

// From drm_open for a primary-node file: it becomes the new master if the device has none,
// otherwise it joins the current one. 0 or -ENOMEM.
int drm_master_open(drm_file* file_priv);
// From drm_release for a primary-node file: its magic goes, and the device's current master too
// when this file holds it.
void drm_master_release(drm_file* file_priv);

// The ioctls.
int drm_getmagic(drm_device* dev, void* data, drm_file* file_priv);
int drm_authmagic(drm_device* dev, void* data, drm_file* file_priv);
int drm_setmaster_ioctl(drm_device* dev, void* data, drm_file* file_priv);
int drm_dropmaster_ioctl(drm_device* dev, void* data, drm_file* file_priv);

}  // namespace drm
