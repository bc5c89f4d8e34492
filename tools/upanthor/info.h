// `upanthor info`: what a client learns about the device, the way IGT's panthor_query and drm_info
// show it. The driver is probed in-process on the mock GPU (simulated runtime) and queried through
// the userspace client library over the in-process backend, i.e. through the same ioctls a UMD
// issues; the firmware details no ioctl exposes come from the in-process driver directly.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "mock_hw/config.h"
#include "uapi/drm/panfrost_drm.h"
#include "uapi/drm/panthor_drm.h"
#include "umd/drm_version.h"

namespace upanthor {

// Everything `info` prints, gathered before anything is printed (so kernel log lines never
// interleave with the report).
struct DeviceInfo {
    umd::DriverVersion driver;
    drm_panthor_gpu_info gpu{};
    drm_panthor_csif_info csif{};
    drm_panthor_timestamp_info timestamp{};
    std::uint8_t allowed_priorities = 0;
    // DEV_QUERY_MMU_INFO (1.9); unset when the driver does not answer it.
    std::optional<std::uint64_t> page_size_bitmap;
    std::string fw_file;
    std::uint32_t fw_iface_version = 0;
    std::uint32_t fw_features = 0, fw_instr_features = 0;
    std::uint32_t fw_csg_count = 0, fw_cs_count = 0;
    std::optional<std::string> fw_git_sha;
};

// The marketing name for a GPU_ID ("Mali-G610"), or "(Unknown Mali GPU)".
const char* gpu_model_name(std::uint32_t gpu_id);

// Probes the driver on a mock GPU built from `cfg` and fills `out`. 0 or a negative errno; on
// failure `*what` names the step that failed.
int probe_device_info(const mock_hw::GpuConfig& cfg, DeviceInfo* out, std::string* what);

void print_info_text(const DeviceInfo& info, std::FILE* out);
void print_info_json(const DeviceInfo& info, std::FILE* out);

// What `info --gpu g52` prints for a Job Manager GPU (panfrost): every GET_PARAM answer, and the
// hardware features and issues the driver derived from GPU_ID at probe (no ioctl exposes those;
// the tool hosts the driver, so it asks it).
struct JmDeviceInfo {
    std::string model;  // the host model ("g52")
    umd::DriverVersion driver;
    static constexpr unsigned kParams = DRM_PANFROST_PARAM_SELECTED_COHERENCY + 1;
    std::uint64_t params[kParams] = {};
    bool param_ok[kParams] = {};
    std::uint64_t hw_features = 0, hw_issues = 0;
};

// The marketing name of a JM GPU_ID's product ("Mali-G52"), or "(Unknown Mali GPU)".
const char* jm_gpu_model_name(std::uint32_t gpu_id);

// Probes the driver on the host model `model` (a Job Manager one) and fills `out`.
int probe_jm_device_info(std::string_view model, JmDeviceInfo* out, std::string* what);
void print_jm_info_text(const JmDeviceInfo& info, std::FILE* out);
void print_jm_info_json(const JmDeviceInfo& info, std::FILE* out);

// The `info` subcommand on host model `gpu` ("default", "g610", "g52"): exit status (0, 1 when
// the device could not be probed, 2 for an unknown model).
int cmd_info(std::string_view gpu, bool json, std::FILE* out, std::FILE* err);

}  // namespace upanthor
