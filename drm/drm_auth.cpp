// Mirrors drivers/gpu/drm/drm_auth.c (see drm/drm_auth.h).
#include "drm/drm_auth.h"

#include "drm/drm_device.h"
#include "drm/drm_file.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/log.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/task.h"
#include "uapi/drm/drm.h"

namespace drm {

using namespace kshim;

namespace {

// What an authenticated client's magic maps to: the id stays taken, but AUTH_MAGIC no longer
// finds a file behind it (the kernel's idr_replace with NULL).
drm_file* const kMagicUsed = reinterpret_cast<drm_file*>(alignof(drm_file));

bool drm_is_current_master_locked(drm_file* fpriv) REQUIRES(fpriv->dev->master_mutex) {
    return fpriv->is_master && fpriv->master == fpriv->dev->master;
}

drm_master* drm_master_create(drm_device* dev) {
    auto* master = knew<drm_master>(GFP_KERNEL);
    if (!master)
        return nullptr;
    kref_init(&master->refcount);
    master->dev = dev;
    return master;
}

void drm_set_master(drm_device* dev, drm_file* fpriv) REQUIRES(dev->master_mutex) {
    dev->master = drm_master_get(fpriv->master);
    fpriv->was_master = true;
}

int drm_new_set_master(drm_device* dev, drm_file* fpriv) REQUIRES(dev->master_mutex) {
    lockdep_assert_held(&dev->master_mutex);
    WARN_ON(fpriv->is_master);
    drm_master* old_master = fpriv->master;
    drm_master* new_master = drm_master_create(dev);
    if (!new_master)
        return -ENOMEM;
    {
        SpinGuard g(fpriv->master_lookup_lock);
        fpriv->master = new_master;
    }
    fpriv->is_master = true;
    fpriv->authenticated = true;
    drm_set_master(dev, fpriv);
    if (old_master)
        drm_master_put(&old_master);
    return 0;
}

// The kernel lets a file that was master, used by the process that opened it, give up and take
// back the master role without privileges (what a compositor started without logind needs);
// anyone else needs CAP_SYS_ADMIN.
int drm_master_check_perm(drm_file* file_priv) {
    if (file_priv->pid == task_tgid_nr(current()) && file_priv->was_master)
        return 0;
    if (!capable(CAP_SYS_ADMIN))
        return -EACCES;
    return 0;
}

void drm_drop_master(drm_device* dev) REQUIRES(dev->master_mutex) {
    drm_master_put(&dev->master);
}

}  // namespace

// Upstream reads dev->master under the file's master_lookup_lock alone (callable from atomic
// context); every caller here may sleep, so it takes master_mutex, which guards dev->master, and
// the read is not a data race in real mode.
bool drm_is_current_master(drm_file* fpriv) {
    MutexGuard g(fpriv->dev->master_mutex);
    return drm_is_current_master_locked(fpriv);
}

drm_master* drm_master_get(drm_master* master) {
    kref_get(&master->refcount);
    return master;
}

drm_master* drm_file_get_master(drm_file* fpriv) {
    SpinGuard g(fpriv->master_lookup_lock);
    return fpriv->master ? drm_master_get(fpriv->master) : nullptr;
}

void drm_master_put(drm_master** master) {
    kref_put(&(*master)->refcount, [](kref* k) { kdelete(container_of(k, drm_master, refcount)); });
    *master = nullptr;
}

int drm_getmagic(drm_device* dev, void* data, drm_file* file_priv) {
    auto* auth = static_cast<uapi::drm_auth*>(data);
    int ret = 0;
    MutexGuard g(dev->master_mutex);
    if (!file_priv->magic) {
        u32 id = 0;
        ret = file_priv->master->magic_map.alloc(&id, file_priv, XaLimit{1, INT_MAX}, GFP_KERNEL);
        if (ret == -EBUSY)
            ret = -ENOSPC;  // idr_alloc's answer for a full range
        if (!ret)
            file_priv->magic = id;
    }
    auth->magic = file_priv->magic;
    return ret;
}

int drm_authmagic(drm_device* dev, void* data, drm_file* file_priv) {
    auto* auth = static_cast<uapi::drm_auth*>(data);
    MutexGuard g(dev->master_mutex);
    drm_file* file = auth->magic ? file_priv->master->magic_map.load(auth->magic) : nullptr;
    if (file == kMagicUsed)
        file = nullptr;
    if (file) {
        file->authenticated = true;
        file_priv->master->magic_map.store(auth->magic, kMagicUsed);
    }
    return file ? 0 : -EINVAL;
}

int drm_setmaster_ioctl(drm_device* dev, void*, drm_file* file_priv) {
    MutexGuard g(dev->master_mutex);
    int ret = drm_master_check_perm(file_priv);
    if (ret)
        return ret;
    if (drm_is_current_master_locked(file_priv))
        return 0;
    if (dev->master)
        return -EBUSY;
    if (!file_priv->master)
        return -EINVAL;
    if (!file_priv->is_master)
        return drm_new_set_master(dev, file_priv);
    drm_set_master(dev, file_priv);
    return 0;
}

int drm_dropmaster_ioctl(drm_device* dev, void*, drm_file* file_priv) {
    MutexGuard g(dev->master_mutex);
    int ret = drm_master_check_perm(file_priv);
    if (ret)
        return ret;
    if (!drm_is_current_master_locked(file_priv))
        return -EINVAL;
    if (!dev->master)
        return -EINVAL;
    drm_drop_master(dev);
    return 0;
}

int drm_master_open(drm_file* file_priv) {
    drm_device* dev = file_priv->dev;
    MutexGuard g(dev->master_mutex);
    if (!dev->master)
        return drm_new_set_master(dev, file_priv);
    SpinGuard sg(file_priv->master_lookup_lock);
    file_priv->master = drm_master_get(dev->master);
    return 0;
}

void drm_master_release(drm_file* file_priv) {
    drm_device* dev = file_priv->dev;
    MutexGuard g(dev->master_mutex);
    if (file_priv->magic)
        file_priv->master->magic_map.erase(file_priv->magic);
    if (drm_is_current_master_locked(file_priv) && dev->master == file_priv->master)
        drm_drop_master(dev);
    if (file_priv->master)
        drm_master_put(&file_priv->master);
}

}  // namespace drm
