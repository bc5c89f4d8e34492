// `upanthor info` (info.h): probe, query through the client library, print decoded.
#include "tools/upanthor/info.h"

#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "drm/drm_file.h"
#include "host/world.h"
#include "hw/csf/fw_iface.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_fw.h"
#include "umd/panthor_client.h"

namespace upanthor {

using namespace drm::uapi;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

const char* gpu_model_name(u32 gpu_id) {
    // Products are named by (arch major, product major), as the kernel's get_gpu_model_name().
    struct Model {
        u32 arch_major, product_major;
        const char* name;
    };
    static constexpr Model models[] = {
        {10, 2, "Mali-G710"}, {10, 3, "Mali-G510"}, {10, 4, "Mali-G310"}, {10, 7, "Mali-G610"}, {11, 2, "Mali-G715"},
        {11, 3, "Mali-G615"}, {12, 0, "Mali-G720"}, {12, 1, "Mali-G620"}, {13, 0, "Mali-G925"}, {13, 1, "Mali-G625"},
    };
    for (const Model& m : models)
        if (DRM_PANTHOR_ARCH_MAJOR(gpu_id) == m.arch_major && DRM_PANTHOR_PRODUCT_MAJOR(gpu_id) == m.product_major)
            return m.name;
    return "(Unknown Mali GPU)";
}

namespace {

// Field decoders for the GPU_* feature registers (docs/hw/csf/gpu-control.md; kbase's register
// docs).
struct Decoded {
    unsigned cores, l2_slices, l2_line_bytes, l2_assoc, l2_bus_bits;
    u64 l2_size_bytes;
    unsigned tiler_bin_bytes, tiler_max_levels;
    unsigned va_bits, pa_bits, as_count;
    bool coherent_core_group;
};

Decoded decode_gpu(const drm_panthor_gpu_info& g) {
    Decoded d{};
    d.cores = static_cast<unsigned>(std::popcount(g.shader_present));
    d.l2_slices = ((g.mem_features >> 8) & 0xF) + 1;
    d.l2_line_bytes = 1u << (g.l2_features & 0xFF);
    d.l2_assoc = 1u << ((g.l2_features >> 8) & 0xFF);
    d.l2_size_bytes = u64{1} << ((g.l2_features >> 16) & 0xFF);
    d.l2_bus_bits = 1u << ((g.l2_features >> 24) & 0xFF);
    d.tiler_bin_bytes = 1u << (g.tiler_features & 0x3F);
    d.tiler_max_levels = (g.tiler_features >> 8) & 0xF;
    d.va_bits = g.mmu_features & 0xFF;
    d.pa_bits = (g.mmu_features >> 8) & 0xFF;
    d.as_count = static_cast<unsigned>(std::popcount(g.as_present));
    d.coherent_core_group = g.mem_features & 1;
    return d;
}

std::vector<const char*> coherency_protocols(u32 features) {
    std::vector<const char*> v;
    if (features & panthor::GPU_COHERENCY_PROT_BIT(panthor::GPU_COHERENCY_ACE_LITE))
        v.push_back("ACE-Lite");
    if (features & panthor::GPU_COHERENCY_PROT_BIT(panthor::GPU_COHERENCY_ACE))
        v.push_back("ACE");
    return v;
}

std::vector<const char*> priority_names(std::uint8_t mask) {
    static const char* const names[] = {"low", "medium", "high", "realtime"};
    std::vector<const char*> v;
    for (unsigned p = 0; p < 4; p++)
        if (mask & (1u << p))
            v.push_back(names[p]);
    return v;
}

std::string human_bytes(u64 b) {
    char buf[32];
    if (b >= (u64{1} << 20) && b % (u64{1} << 20) == 0)
        std::snprintf(buf, sizeof(buf), "%" PRIu64 " MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        std::snprintf(buf, sizeof(buf), "%" PRIu64 " KiB", b >> 10);
    else
        std::snprintf(buf, sizeof(buf), "%" PRIu64 " B", b);
    return buf;
}

std::string iface_version_str(u32 v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%u.%u.%u", panthor::CSF_IFACE_VERSION_MAJOR(v),
                  panthor::CSF_IFACE_VERSION_MINOR(v), panthor::CSF_IFACE_VERSION_PATCH(v));
    return buf;
}

// A small JSON writer: objects, arrays, strings (escaped), numbers, booleans; comma placement and
// indentation handled here so the printer below reads like the document it writes.
class Json {
public:
    explicit Json(std::FILE* out) : out_(out) {}
    void begin_object(const char* key = nullptr) { open(key, '{'); }
    void end_object() { close('}'); }
    void begin_array(const char* key = nullptr) { open(key, '['); }
    void end_array() { close(']'); }
    void str(const char* key, const std::string& v) {
        prefix(key);
        quote(v);
    }
    void num(const char* key, u64 v) {
        prefix(key);
        std::fprintf(out_, "%" PRIu64, v);
    }
    void boolean(const char* key, bool v) {
        prefix(key);
        std::fputs(v ? "true" : "false", out_);
    }
    void null(const char* key) {
        prefix(key);
        std::fputs("null", out_);
    }
    void finish() { std::fputc('\n', out_); }

private:
    void open(const char* key, char c) {
        prefix(key);
        std::fputc(c, out_);
        first_.push_back(true);
    }
    void close(char c) {
        const bool empty = first_.back();
        first_.pop_back();
        if (!empty)
            newline();
        std::fputc(c, out_);
    }
    void newline() {
        std::fputc('\n', out_);
        for (size_t i = 0; i < first_.size(); i++)
            std::fputs("  ", out_);
    }
    void prefix(const char* key) {
        if (!first_.empty()) {
            if (!first_.back())
                std::fputc(',', out_);
            first_.back() = false;
            newline();
        }
        if (key) {
            quote(key);
            std::fputs(": ", out_);
        }
    }
    void quote(const std::string& s) {
        std::fputc('"', out_);
        for (unsigned char c : s) {
            if (c == '"' || c == '\\')
                std::fprintf(out_, "\\%c", c);
            else if (c < 0x20)
                std::fprintf(out_, "\\u%04x", c);
            else
                std::fputc(c, out_);
        }
        std::fputc('"', out_);
    }

    std::FILE* out_;
    std::vector<bool> first_;  // per open container: nothing written into it yet
};

}  // namespace

int probe_device_info(const mock_hw::GpuConfig& cfg, DeviceInfo* out, std::string* what) {
    // Simulated runtime, default seed: probing is deterministic and costs no wall time for the
    // firmware boot and power transitions.
    upanthor::host::World::Options opts;
    opts.machine.config.csf = cfg;
    upanthor::host::World world(opts);
    int ret = world.status();
    if (ret) {
        *what = world.failed_step();
        if (ret == -ENOENT)
            *what += " (is the mock firmware image built? target upanthor_firmware)";
        return ret;
    }
    upanthor::host::Machine& m = *world.machine();
    upanthor::host::Client* cl = m.open_client(&ret);
    if (!cl) {
        *what = "drm_open";
        return ret;
    }
    auto client = umd::PanthorClient::open(*cl->backend);
    if (!client.ok()) {
        ret = client.error();
        *what = "PanthorClient::open (GPU_INFO/CSIF_INFO queries)";
    } else {
        umd::PanthorClient& c = **client;
        out->gpu = c.gpu_info();
        out->csif = c.csif_info();
        if (auto v = c.version(); v.ok()) {
            out->driver_name = v->name;
            out->driver_date = v->date;
            out->driver_desc = v->desc;
            out->driver_major = v->major;
            out->driver_minor = v->minor;
            out->driver_patchlevel = v->patchlevel;
        } else {
            ret = v.error();
            *what = "DRM_IOCTL_VERSION";
        }
        if (auto t = c.query_timestamp_info(); t.ok()) {
            out->timestamp = *t;
        } else if (!ret) {
            ret = t.error();
            *what = "DEV_QUERY TIMESTAMP_INFO";
        }
        if (auto p = c.query_group_priorities(); p.ok()) {
            out->allowed_priorities = p->allowed_mask;
        } else if (!ret) {
            ret = p.error();
            *what = "DEV_QUERY GROUP_PRIORITIES_INFO";
        }
        client->reset();
    }
    // Not reachable through any ioctl; the tool hosts the driver, so it asks it.
    panthor::panthor_device* ptdev = panthor::panthor_from_pdev(m.pdev());
    out->fw_file = panthor::panthor_fw_file_name(ptdev);
    out->fw_iface_version = panthor::panthor_fw_iface_version(ptdev);
    out->fw_features = panthor::panthor_fw_features(ptdev);
    out->fw_instr_features = panthor::panthor_fw_instr_features(ptdev);
    out->fw_csg_count = panthor::panthor_fw_csg_count(ptdev);
    out->fw_cs_count = panthor::panthor_fw_cs_count(ptdev);
    if (const char* sha = panthor::panthor_fw_git_sha(ptdev))
        out->fw_git_sha = sha;
    m.close_client(cl);
    if (std::string problems = upanthor::host::problems_text(world.finish()); !problems.empty() && !ret) {
        std::fprintf(stderr, "%s", problems.c_str());
        ret = -EIO;
        *what = "the end-of-run checks (above)";
    }
    return ret;
}

void print_info_text(const DeviceInfo& in, std::FILE* out) {
    const drm_panthor_gpu_info& g = in.gpu;
    const Decoded d = decode_gpu(g);
    std::fprintf(out, "Driver: %s %d.%d.%d (%s) \"%s\"\n", in.driver_name.c_str(), in.driver_major, in.driver_minor,
                 in.driver_patchlevel, in.driver_date.c_str(), in.driver_desc.c_str());
    std::fprintf(out, "GPU: %s (simulated)\n", gpu_model_name(g.gpu_id));
    std::fprintf(out, "  gpu_id            0x%08x: arch %u.%u rev %u, product %u, r%up%u status %u\n", g.gpu_id,
                 DRM_PANTHOR_ARCH_MAJOR(g.gpu_id), DRM_PANTHOR_ARCH_MINOR(g.gpu_id), DRM_PANTHOR_ARCH_REV(g.gpu_id),
                 DRM_PANTHOR_PRODUCT_MAJOR(g.gpu_id), DRM_PANTHOR_VERSION_MAJOR(g.gpu_id),
                 DRM_PANTHOR_VERSION_MINOR(g.gpu_id), DRM_PANTHOR_VERSION_STATUS(g.gpu_id));
    std::fprintf(out, "  gpu_rev           0x%08x\n", g.gpu_rev);
    std::fprintf(out, "  csf_id            0x%08x: CSHW %u.%u.%u, MCU %u.%u.%u\n", g.csf_id,
                 DRM_PANTHOR_CSHW_MAJOR(g.csf_id), DRM_PANTHOR_CSHW_MINOR(g.csf_id), DRM_PANTHOR_CSHW_REV(g.csf_id),
                 DRM_PANTHOR_MCU_MAJOR(g.csf_id), DRM_PANTHOR_MCU_MINOR(g.csf_id), DRM_PANTHOR_MCU_REV(g.csf_id));
    std::fprintf(out, "  shader cores      %u (shader_present 0x%" PRIx64 ")\n", d.cores, u64{g.shader_present});
    std::fprintf(out,
                 "  L2 cache          %u slice(s), %s, %u-byte lines, %u-way, %u-bit bus (l2_features 0x%08x, "
                 "l2_present 0x%" PRIx64 ")\n",
                 d.l2_slices, human_bytes(d.l2_size_bytes).c_str(), d.l2_line_bytes, d.l2_assoc, d.l2_bus_bits,
                 g.l2_features, u64{g.l2_present});
    std::fprintf(out, "  memory            coherent core group: %s (mem_features 0x%08x)\n",
                 d.coherent_core_group ? "yes" : "no", g.mem_features);
    std::fprintf(out,
                 "  tiler             bin size %u B, max %u active levels (tiler_features 0x%08x, "
                 "tiler_present 0x%" PRIx64 ")\n",
                 d.tiler_bin_bytes, d.tiler_max_levels, g.tiler_features, u64{g.tiler_present});
    std::fprintf(out, "  MMU               %u-bit VA, %u-bit PA (mmu_features 0x%08x)\n", d.va_bits, d.pa_bits,
                 g.mmu_features);
    std::fprintf(out, "  address spaces    %u (as_present 0x%x)\n", d.as_count, g.as_present);
    std::string coh;
    for (const char* p : coherency_protocols(g.coherency_features))
        coh += coh.empty() ? p : std::string(", ") + p;
    std::fprintf(out, "  coherency         %s (coherency_features 0x%08x)\n", coh.empty() ? "none" : coh.c_str(),
                 g.coherency_features);
    std::fprintf(out, "  threads           max %u, workgroup %u, barrier %u (thread_features 0x%08x)\n", g.max_threads,
                 g.thread_max_workgroup_size, g.thread_max_barrier_size, g.thread_features);
    std::fprintf(out, "  core_features     0x%08x\n", g.core_features);
    std::fprintf(out, "  texture_features  0x%08x 0x%08x 0x%08x 0x%08x\n", g.texture_features[0], g.texture_features[1],
                 g.texture_features[2], g.texture_features[3]);
    const drm_panthor_csif_info& cs = in.csif;
    std::fprintf(out, "CSIF: %u CSG slots, %u CS per CSG, %u CS registers (%u unpreserved), %u scoreboard slots\n",
                 cs.csg_slot_count, cs.cs_slot_count, cs.cs_reg_count, cs.unpreserved_cs_reg_count,
                 cs.scoreboard_slot_count);
    std::fprintf(out, "Firmware: %s\n", in.fw_file.c_str());
    std::fprintf(out, "  interface         %s (0x%08x), features 0x%08x, instr features 0x%08x\n",
                 iface_version_str(in.fw_iface_version).c_str(), in.fw_iface_version, in.fw_features,
                 in.fw_instr_features);
    std::fprintf(out, "  groups            %u CSG, %u CS each\n", in.fw_csg_count, in.fw_cs_count);
    std::fprintf(out, "  git sha           %s\n", in.fw_git_sha ? in.fw_git_sha->c_str() : "(none in the image)");
    std::fprintf(out, "Timestamp: %" PRIu64 " Hz, current %" PRIu64 ", offset %" PRIu64 "\n",
                 u64{in.timestamp.timestamp_frequency}, u64{in.timestamp.current_timestamp},
                 u64{in.timestamp.timestamp_offset});
    std::string prio;
    for (const char* p : priority_names(in.allowed_priorities))
        prio += prio.empty() ? p : std::string(" ") + p;
    std::fprintf(out, "Group priorities: %s (allowed_mask 0x%x)\n", prio.empty() ? "none" : prio.c_str(),
                 in.allowed_priorities);
}

void print_info_json(const DeviceInfo& in, std::FILE* out) {
    const drm_panthor_gpu_info& g = in.gpu;
    const Decoded d = decode_gpu(g);
    Json j(out);
    j.begin_object();
    j.begin_object("driver");
    j.str("name", in.driver_name);
    j.num("major", static_cast<u64>(in.driver_major));
    j.num("minor", static_cast<u64>(in.driver_minor));
    j.num("patchlevel", static_cast<u64>(in.driver_patchlevel));
    j.str("date", in.driver_date);
    j.str("desc", in.driver_desc);
    j.end_object();

    j.begin_object("gpu");
    j.str("model", gpu_model_name(g.gpu_id));
    j.num("gpu_id", g.gpu_id);
    j.num("arch_major", DRM_PANTHOR_ARCH_MAJOR(g.gpu_id));
    j.num("arch_minor", DRM_PANTHOR_ARCH_MINOR(g.gpu_id));
    j.num("arch_rev", DRM_PANTHOR_ARCH_REV(g.gpu_id));
    j.num("product_major", DRM_PANTHOR_PRODUCT_MAJOR(g.gpu_id));
    j.num("version_major", DRM_PANTHOR_VERSION_MAJOR(g.gpu_id));
    j.num("version_minor", DRM_PANTHOR_VERSION_MINOR(g.gpu_id));
    j.num("version_status", DRM_PANTHOR_VERSION_STATUS(g.gpu_id));
    j.num("gpu_rev", g.gpu_rev);
    j.num("csf_id", g.csf_id);
    j.num("shader_present", g.shader_present);
    j.num("shader_cores", d.cores);
    j.begin_object("l2");
    j.num("l2_features", g.l2_features);
    j.num("l2_present", g.l2_present);
    j.num("slices", d.l2_slices);
    j.num("size_bytes", d.l2_size_bytes);
    j.num("line_bytes", d.l2_line_bytes);
    j.num("associativity", d.l2_assoc);
    j.num("bus_bits", d.l2_bus_bits);
    j.end_object();
    j.num("mem_features", g.mem_features);
    j.boolean("coherent_core_group", d.coherent_core_group);
    j.begin_object("tiler");
    j.num("tiler_features", g.tiler_features);
    j.num("tiler_present", g.tiler_present);
    j.num("bin_size_bytes", d.tiler_bin_bytes);
    j.num("max_active_levels", d.tiler_max_levels);
    j.end_object();
    j.begin_object("mmu");
    j.num("mmu_features", g.mmu_features);
    j.num("va_bits", d.va_bits);
    j.num("pa_bits", d.pa_bits);
    j.num("as_present", g.as_present);
    j.num("address_spaces", d.as_count);
    j.end_object();
    j.num("coherency_features", g.coherency_features);
    j.begin_array("coherency_protocols");
    for (const char* p : coherency_protocols(g.coherency_features))
        j.str(nullptr, p);
    j.end_array();
    j.num("thread_features", g.thread_features);
    j.num("max_threads", g.max_threads);
    j.num("thread_max_workgroup_size", g.thread_max_workgroup_size);
    j.num("thread_max_barrier_size", g.thread_max_barrier_size);
    j.num("core_features", g.core_features);
    j.begin_array("texture_features");
    for (u32 t : g.texture_features)
        j.num(nullptr, t);
    j.end_array();
    j.end_object();

    j.begin_object("csif");
    j.num("csg_slot_count", in.csif.csg_slot_count);
    j.num("cs_slot_count", in.csif.cs_slot_count);
    j.num("cs_reg_count", in.csif.cs_reg_count);
    j.num("scoreboard_slot_count", in.csif.scoreboard_slot_count);
    j.num("unpreserved_cs_reg_count", in.csif.unpreserved_cs_reg_count);
    j.end_object();

    j.begin_object("firmware");
    j.str("file", in.fw_file);
    j.num("iface_version", in.fw_iface_version);
    j.str("iface_version_str", iface_version_str(in.fw_iface_version));
    j.num("features", in.fw_features);
    j.num("instr_features", in.fw_instr_features);
    j.num("csg_count", in.fw_csg_count);
    j.num("cs_count", in.fw_cs_count);
    if (in.fw_git_sha)
        j.str("git_sha", *in.fw_git_sha);
    else
        j.null("git_sha");
    j.end_object();

    j.begin_object("timestamp");
    j.num("frequency", in.timestamp.timestamp_frequency);
    j.num("current", in.timestamp.current_timestamp);
    j.num("offset", in.timestamp.timestamp_offset);
    j.end_object();

    j.begin_object("group_priorities");
    j.num("allowed_mask", in.allowed_priorities);
    j.begin_array("allowed");
    for (const char* p : priority_names(in.allowed_priorities))
        j.str(nullptr, p);
    j.end_array();
    j.end_object();
    j.end_object();
    j.finish();
}

int cmd_info(bool json, std::FILE* out, std::FILE* err) {
    DeviceInfo info;
    std::string what;
    const int ret = probe_device_info(mock_hw::GpuConfig{}, &info, &what);
    if (ret) {
        std::fprintf(err, "upanthor info: %s failed: %s (%d)\n", what.c_str(), std::strerror(-ret), ret);
        return 1;
    }
    if (json)
        print_info_json(info, out);
    else
        print_info_text(info, out);
    return 0;
}

}  // namespace upanthor
