// (no upstream counterpart) The machine (machine.h).
#include "host/machine.h"

#include <algorithm>
#include <cerrno>

#include "drm/drm_device.h"
#include "drm/drm_file.h"
#include "kernel_shim/devcoredump.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/runtime.h"

namespace upanthor::host {

int Machine::create(const Options& opts, std::unique_ptr<Machine>* out) {
    const GpuModel* model = find_gpu_model(opts.model);
    if (!model) {
        pr_err("host: no GPU model '%.*s' (models: %s)", static_cast<int>(opts.model.size()), opts.model.data(),
               gpu_model_names().c_str());
        return -EINVAL;
    }
    std::unique_ptr<Machine> m(new Machine(*model, opts.config));
    if (int ret = model->driver->init())
        return ret;
    m->module_loaded_ = true;
    m->device_ = model->create(m->cfg_);
    *out = std::move(m);
    return 0;
}

Machine::~Machine() {
    remove();
    device_.reset();
    if (module_loaded_)
        model_->driver->exit();
}

Client::~Client() {
    backend.reset();  // unmaps what the client left mapped
    if (file)
        drm::drm_release(file);
}

int Machine::probe() {
    if (probed())
        return -EBUSY;
    if (!driver().matches(pdev()->desc.compatible))
        return -ENODEV;
    return driver().probe(pdev());
}

bool Machine::probed() {
    return device_ && driver().drm_dev_of(pdev()) != nullptr;
}

void Machine::remove() {
    clients_.clear();
    if (!probed())
        return;
    driver().remove(pdev());
}

void Machine::new_device() {
    remove();
    device_.reset();
    device_ = model_->create(cfg_);
}

drm::drm_device* Machine::drm_dev() {
    return device_ ? driver().drm_dev_of(pdev()) : nullptr;
}

int Machine::open_file(drm::drm_file** out, bool render) {
    drm::drm_device* ddev = drm_dev();
    if (!ddev)
        return -ENODEV;
    return drm::drm_open(ddev, out, render);
}

Client* Machine::open_client(int* err, bool render) {
    auto c = std::make_unique<Client>();
    const int ret = open_file(&c->file, render);
    if (err)
        *err = ret;
    if (ret)
        return nullptr;
    c->backend = std::make_unique<umd::DrmFileBackend>(c->file);
    clients_.push_back(std::move(c));
    return clients_.back().get();
}

void Machine::close_client(Client* c) {
    auto it = std::find_if(clients_.begin(), clients_.end(), [&](const auto& p) { return p.get() == c; });
    if (it == clients_.end())
        return;
    clients_.erase(it);
}

bool Machine::settle(kshim::ktime_t timeout) {
    if (!probed())
        return true;
    kshim::Runtime* rt = kshim::Runtime::get();
    return rt && rt->run_until([&] { return kshim::pm_runtime_suspended(dev()); }, timeout);
}

bool Machine::consume_devcoredump() {
    if (!kshim::dev_coredump_pending(dev()))
        return false;
    char buf[4096];
    for (loff_t off = 0;;) {
        const ssize_t n = kshim::devcd_read(dev(), buf, off, sizeof buf);
        if (n <= 0)
            break;
        off += n;
    }
    kshim::dev_coredump_clear(dev());
    return true;
}

bool Machine::device_lost() {
    drm::drm_device* ddev = drm_dev();
    return ddev && ddev->is_unplugged();
}

}  // namespace upanthor::host
