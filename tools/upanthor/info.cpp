// `upanthor info` (info.h): probe, query through the client library, print decoded.
#include "tools/upanthor/info.h"

#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <vector>

#include "drm/drm_file.h"
#include "host/gpu_models.h"
#include "host/world.h"
#include "hw/csf/fw_iface.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/jm/models.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/platform.h"
#include "panfrost/panfrost_drv.h"
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

// "4K 2M" for 0x201000: every set bit as a size.
std::string page_size_names(std::uint64_t bitmap) {
    std::string s;
    for (unsigned bit = 0; bit < 64; bit++) {
        if (!(bitmap >> bit & 1))
            continue;
        static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
        char buf[16];
        std::snprintf(buf, sizeof(buf), "%llu%s", 1ull << (bit % 10), kUnits[bit / 10]);
        s += s.empty() ? buf : std::string(" ") + buf;
    }
    return s.empty() ? "none" : s;
}

// drm_panthor_gpu_info::selected_coherency (1.7).
const char* selected_coherency_name(u32 v) {
    switch (v) {
    case DRM_PANTHOR_GPU_COHERENCY_ACE_LITE: return "ACE-Lite";
    case DRM_PANTHOR_GPU_COHERENCY_ACE: return "ACE";
    case DRM_PANTHOR_GPU_COHERENCY_NONE: return "none";
    default: return "unknown";
    }
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

// DRM_IOCTL_VERSION's answer, the same for every driver: the text line and the JSON object.
void print_driver_text(const umd::DriverVersion& v, std::FILE* out) {
    std::fprintf(out, "Driver: %s %d.%d.%d (%s) \"%s\"\n", v.name.c_str(), v.major, v.minor, v.patchlevel,
                 v.date.c_str(), v.desc.c_str());
}
void print_driver_json(Json& j, const umd::DriverVersion& v) {
    j.begin_object("driver");
    j.str("name", v.name);
    j.num("major", static_cast<u64>(v.major));
    j.num("minor", static_cast<u64>(v.minor));
    j.num("patchlevel", static_cast<u64>(v.patchlevel));
    j.str("date", v.date);
    j.str("desc", v.desc);
    j.end_object();
}

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
            out->driver = *v;
        } else {
            ret = v.error();
            *what = "DRM_IOCTL_VERSION";
        }
        // Every source the 1.8 query offers, sampled together.
        constexpr u32 kTimestampFlags = DRM_PANTHOR_TIMESTAMP_GPU | DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC |
                                        DRM_PANTHOR_TIMESTAMP_GPU_OFFSET | DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT |
                                        DRM_PANTHOR_TIMESTAMP_FREQ | DRM_PANTHOR_TIMESTAMP_DURATION;
        if (auto t = c.query_timestamp_info(kTimestampFlags); t.ok()) {
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
        // A driver before 1.9 does not know the query: not an error, the field stays unset.
        if (auto mi = c.query_mmu_info(); mi.ok())
            out->page_size_bitmap = mi->page_size_bitmap;
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
    print_driver_text(in.driver, out);
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
    std::fprintf(out, "  coherency         %s (coherency_features 0x%08x), selected %s (%u)\n",
                 coh.empty() ? "none" : coh.c_str(), g.coherency_features,
                 selected_coherency_name(g.selected_coherency), g.selected_coherency);
    std::fprintf(out, "  gpu_features      0x%016" PRIx64 "\n", u64{g.gpu_features});
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
    std::fprintf(out, "  cycle count       %" PRIu64 ", CPU monotonic %" PRIu64 ".%09" PRIu64 " s, sampled in %u ns\n",
                 u64{in.timestamp.cycle_count}, u64{in.timestamp.cpu_timestamp_sec},
                 u64{in.timestamp.cpu_timestamp_nsec}, in.timestamp.duration_nsec);
    std::string prio;
    for (const char* p : priority_names(in.allowed_priorities))
        prio += prio.empty() ? p : std::string(" ") + p;
    std::fprintf(out, "Group priorities: %s (allowed_mask 0x%x)\n", prio.empty() ? "none" : prio.c_str(),
                 in.allowed_priorities);
    if (in.page_size_bitmap)
        std::fprintf(out, "MMU page sizes: %s (page_size_bitmap 0x%" PRIx64 ")\n",
                     page_size_names(*in.page_size_bitmap).c_str(), *in.page_size_bitmap);
    else
        std::fprintf(out, "MMU page sizes: not reported (driver before 1.9)\n");
}

void print_info_json(const DeviceInfo& in, std::FILE* out) {
    const drm_panthor_gpu_info& g = in.gpu;
    const Decoded d = decode_gpu(g);
    Json j(out);
    j.begin_object();
    print_driver_json(j, in.driver);

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
    j.num("selected_coherency", g.selected_coherency);
    j.str("selected_coherency_name", selected_coherency_name(g.selected_coherency));
    j.num("gpu_features", g.gpu_features);
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
    j.num("cycle_count", in.timestamp.cycle_count);
    j.num("cpu_monotonic_sec", in.timestamp.cpu_timestamp_sec);
    j.num("cpu_monotonic_nsec", in.timestamp.cpu_timestamp_nsec);
    j.num("duration_nsec", in.timestamp.duration_nsec);
    j.end_object();

    j.begin_object("group_priorities");
    j.num("allowed_mask", in.allowed_priorities);
    j.begin_array("allowed");
    for (const char* p : priority_names(in.allowed_priorities))
        j.str(nullptr, p);
    j.end_array();
    j.end_object();

    if (in.page_size_bitmap)
        j.num("page_size_bitmap", *in.page_size_bitmap);
    else
        j.null("page_size_bitmap");
    j.end_object();
    j.finish();
}

// ---- Job Manager GPUs (panfrost) ----

const char* jm_gpu_model_name(u32 gpu_id) {
    // panfrost compares GPU_ID >> 16, masked with 0xF00F on Bifrost and later (arch in [15:12]).
    u32 id = gpu_id >> 16;
    if (id & 0xF000)
        id &= 0xF00F;
    struct Model {
        u32 product_id;
        const char* name;
    };
    static constexpr Model models[] = {
        {panfrost::kModelT860.product_id, "Mali-T860"},
        {panfrost::kModelG52.product_id, "Mali-G52"},
        {panfrost::kModelG57.product_id, "Mali-G57"},
    };
    for (const Model& m : models)
        if (m.product_id == id)
            return m.name;
    return "(Unknown Mali GPU)";
}

namespace {

const char* const kHwFeatureNames[] = {
    "JOBCHAIN_DISAMBIGUATION",
    "PWRON_DURING_PWROFF_TRANS",
    "XAFFINITY",
    "V4",
    "FLUSH_REDUCTION",
    "PROTECTED_MODE",
    "COHERENCY_REG",
    "PROTECTED_DEBUG_MODE",
    "AARCH64_MMU",
    "TLS_HASHING",
    "THREAD_GROUP_SPLIT",
    "IDVS_GROUP_SIZE",
    "CLEAN_ONLY_SAFE",
    "3BIT_EXT_RW_L2_MMU_CONFIG",
};
static_assert(std::size(kHwFeatureNames) == panfrost::HW_FEATURES_END);

const char* const kHwIssueNames[] = {
    "6367",         "6787",      "8186",         "8245",
    "8316",         "8394",      "8401",         "8408",
    "8443",         "8987",      "9435",         "9510",
    "9630",         "10327",     "10649",        "10676",
    "10797",        "10817",     "10883",        "10959",
    "10969",        "11020",     "11024",        "11035",
    "11056",        "T76X_3542", "T76X_3953",    "TMIX_8463",
    "GPUCORE_1619", "TMIX_8438", "TGOX_R1_1234", "TTRX_2968_TTRX_3162",
    "TTRX_3076",    "TTRX_3485",
};
static_assert(std::size(kHwIssueNames) == panfrost::HW_ISSUE_END);

std::vector<const char*> bit_names(u64 bits, const char* const* names, unsigned count) {
    std::vector<const char*> v;
    for (unsigned i = 0; i < count; i++)
        if (bits & (u64{1} << i))
            v.push_back(names[i]);
    return v;
}

std::string joined(const std::vector<const char*>& v, const char* sep = " ") {
    std::string s;
    for (const char* p : v)
        s += s.empty() ? p : std::string(sep) + p;
    return s.empty() ? "none" : s;
}

const char* coherency_name(u64 selected) {
    switch (selected) {
    case DRM_PANFROST_GPU_COHERENCY_ACE_LITE: return "ACE-Lite";
    case DRM_PANFROST_GPU_COHERENCY_ACE: return "ACE";
    case DRM_PANFROST_GPU_COHERENCY_NONE: return "none";
    default: return "unknown";
    }
}

// The GET_PARAM number of each field, for the JSON document.
struct ParamName {
    unsigned param;
    const char* name;
};
constexpr ParamName kParamNames[] = {
    {DRM_PANFROST_PARAM_GPU_PROD_ID, "gpu_prod_id"},
    {DRM_PANFROST_PARAM_GPU_REVISION, "gpu_revision"},
    {DRM_PANFROST_PARAM_SHADER_PRESENT, "shader_present"},
    {DRM_PANFROST_PARAM_TILER_PRESENT, "tiler_present"},
    {DRM_PANFROST_PARAM_L2_PRESENT, "l2_present"},
    {DRM_PANFROST_PARAM_STACK_PRESENT, "stack_present"},
    {DRM_PANFROST_PARAM_AS_PRESENT, "as_present"},
    {DRM_PANFROST_PARAM_JS_PRESENT, "js_present"},
    {DRM_PANFROST_PARAM_L2_FEATURES, "l2_features"},
    {DRM_PANFROST_PARAM_CORE_FEATURES, "core_features"},
    {DRM_PANFROST_PARAM_TILER_FEATURES, "tiler_features"},
    {DRM_PANFROST_PARAM_MEM_FEATURES, "mem_features"},
    {DRM_PANFROST_PARAM_MMU_FEATURES, "mmu_features"},
    {DRM_PANFROST_PARAM_THREAD_FEATURES, "thread_features"},
    {DRM_PANFROST_PARAM_MAX_THREADS, "max_threads"},
    {DRM_PANFROST_PARAM_THREAD_MAX_WORKGROUP_SZ, "thread_max_workgroup_sz"},
    {DRM_PANFROST_PARAM_THREAD_MAX_BARRIER_SZ, "thread_max_barrier_sz"},
    {DRM_PANFROST_PARAM_COHERENCY_FEATURES, "coherency_features"},
    {DRM_PANFROST_PARAM_NR_CORE_GROUPS, "nr_core_groups"},
    {DRM_PANFROST_PARAM_THREAD_TLS_ALLOC, "thread_tls_alloc"},
    {DRM_PANFROST_PARAM_AFBC_FEATURES, "afbc_features"},
    {DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY, "system_timestamp_frequency"},
    {DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES, "allowed_jm_ctx_priorities"},
    {DRM_PANFROST_PARAM_SELECTED_COHERENCY, "selected_coherency"},
};

}  // namespace

int probe_jm_device_info(std::string_view model, JmDeviceInfo* out, std::string* what) {
    upanthor::host::World::Options opts;
    opts.machine.model = model;
    upanthor::host::World world(opts);
    int ret = world.status();
    if (ret) {
        *what = world.failed_step();
        return ret;
    }
    out->model = std::string(model);
    upanthor::host::Machine& m = *world.machine();
    upanthor::host::Client* cl = m.open_client(&ret);
    if (!cl) {
        *what = "drm_open";
        return ret;
    }
    umd::Backend& be = *cl->backend;
    if (auto v = umd::drm_get_version(be); v.ok())
        out->driver = *v;
    else
        ret = v.error();
    if (ret)
        *what = "DRM_IOCTL_VERSION";
    // Every parameter, as Mesa's panfrost_kmod queries them (a refused one is reported as such).
    for (unsigned p = 0; p < JmDeviceInfo::kParams && !ret; p++) {
        drm_panfrost_get_param gp{};
        gp.param = p;
        out->param_ok[p] = be.ioctl(DRM_IOCTL_PANFROST_GET_PARAM, &gp) == 0;
        out->params[p] = gp.value;
    }
    if (!ret) {
        const panfrost::panfrost_device* pfdev = panfrost::panfrost_from_pdev(m.pdev());
        out->hw_features = pfdev->features.hw_features.to_ullong();
        for (unsigned i = 0; i < panfrost::HW_ISSUE_END; i++)
            if (pfdev->features.hw_issues.test(i))
                out->hw_issues |= u64{1} << i;
    }
    m.close_client(cl);
    if (std::string problems = upanthor::host::problems_text(world.finish()); !problems.empty() && !ret) {
        std::fprintf(stderr, "%s", problems.c_str());
        ret = -EIO;
        *what = "the end-of-run checks (above)";
    }
    return ret;
}

void print_jm_info_text(const JmDeviceInfo& in, std::FILE* out) {
    const auto P = [&](unsigned p) { return in.params[p]; };
    const u32 gpu_id = static_cast<u32>(P(DRM_PANFROST_PARAM_GPU_PROD_ID) << 16 | P(DRM_PANFROST_PARAM_GPU_REVISION));
    print_driver_text(in.driver, out);
    std::fprintf(out, "GPU: %s (simulated, Job Manager; model %s)\n", jm_gpu_model_name(gpu_id), in.model.c_str());
    std::fprintf(out, "  gpu_id            0x%08x: arch %u.%u rev %u, product %u, r%up%u status %u\n", gpu_id,
                 gpu_id >> 28, (gpu_id >> 24) & 0xF, (gpu_id >> 20) & 0xF, (gpu_id >> 16) & 0xF, (gpu_id >> 12) & 0xF,
                 (gpu_id >> 4) & 0xFF, gpu_id & 0xF);
    const u64 shader = P(DRM_PANFROST_PARAM_SHADER_PRESENT);
    std::fprintf(out, "  shader cores      %d (shader_present 0x%" PRIx64 ", %" PRIu64 " core group(s))\n",
                 std::popcount(shader), shader, P(DRM_PANFROST_PARAM_NR_CORE_GROUPS));
    const u32 l2 = static_cast<u32>(P(DRM_PANFROST_PARAM_L2_FEATURES));
    std::fprintf(out, "  L2 cache          %s, %u-byte lines (l2_features 0x%08x, l2_present 0x%" PRIx64 ")\n",
                 human_bytes(u64{1} << ((l2 >> 16) & 0xFF)).c_str(), 1u << (l2 & 0xFF), l2,
                 P(DRM_PANFROST_PARAM_L2_PRESENT));
    std::fprintf(out, "  tiler             tiler_features 0x%08" PRIx64 ", tiler_present 0x%" PRIx64 "\n",
                 P(DRM_PANFROST_PARAM_TILER_FEATURES), P(DRM_PANFROST_PARAM_TILER_PRESENT));
    const u64 mmu = P(DRM_PANFROST_PARAM_MMU_FEATURES);
    std::fprintf(out, "  MMU               %u-bit VA, %u-bit PA (mmu_features 0x%08" PRIx64 ")\n",
                 static_cast<unsigned>(mmu & 0xFF), static_cast<unsigned>((mmu >> 8) & 0xFF), mmu);
    const u64 as = P(DRM_PANFROST_PARAM_AS_PRESENT);
    std::fprintf(out, "  address spaces    %d (as_present 0x%" PRIx64 ")\n", std::popcount(as), as);
    const u64 js = P(DRM_PANFROST_PARAM_JS_PRESENT);
    std::fprintf(out, "  job slots         %d (js_present 0x%" PRIx64 "):", std::popcount(js), js);
    for (unsigned i = 0; i < 16; i++)
        if (js & (u64{1} << i))
            std::fprintf(out, " js%u 0x%03" PRIx64, i, P(DRM_PANFROST_PARAM_JS_FEATURES0 + i));
    std::fprintf(out, "\n");
    std::fprintf(out,
                 "  threads           max %" PRIu64 ", workgroup %" PRIu64 ", barrier %" PRIu64
                 " (thread_features 0x%08" PRIx64 ")\n",
                 P(DRM_PANFROST_PARAM_MAX_THREADS), P(DRM_PANFROST_PARAM_THREAD_MAX_WORKGROUP_SZ),
                 P(DRM_PANFROST_PARAM_THREAD_MAX_BARRIER_SZ), P(DRM_PANFROST_PARAM_THREAD_FEATURES));
    std::fprintf(
        out, "  core_features     0x%08" PRIx64 ", mem_features 0x%08" PRIx64 ", afbc_features 0x%08" PRIx64 "\n",
        P(DRM_PANFROST_PARAM_CORE_FEATURES), P(DRM_PANFROST_PARAM_MEM_FEATURES), P(DRM_PANFROST_PARAM_AFBC_FEATURES));
    std::fprintf(out, "  coherency         selected %s (coherency_features 0x%08" PRIx64 ")\n",
                 coherency_name(P(DRM_PANFROST_PARAM_SELECTED_COHERENCY)), P(DRM_PANFROST_PARAM_COHERENCY_FEATURES));
    std::fprintf(out, "  hw features       %s (0x%" PRIx64 ")\n",
                 joined(bit_names(in.hw_features, kHwFeatureNames, panfrost::HW_FEATURES_END)).c_str(), in.hw_features);
    std::fprintf(out, "  hw issues         %s (0x%" PRIx64 ")\n",
                 joined(bit_names(in.hw_issues, kHwIssueNames, panfrost::HW_ISSUE_END)).c_str(), in.hw_issues);
    std::fprintf(out, "Timestamp: %" PRIu64 " Hz\n", P(DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY));
    const u64 prio = P(DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES);
    std::fprintf(out, "JM context priorities: %s (0x%" PRIx64 ")\n",
                 joined(priority_names(static_cast<std::uint8_t>(prio & 0x7))).c_str(), prio);
}

void print_jm_info_json(const JmDeviceInfo& in, std::FILE* out) {
    const u32 gpu_id =
        static_cast<u32>(in.params[DRM_PANFROST_PARAM_GPU_PROD_ID] << 16 | in.params[DRM_PANFROST_PARAM_GPU_REVISION]);
    Json j(out);
    j.begin_object();
    print_driver_json(j, in.driver);
    j.begin_object("gpu");
    j.str("host_model", in.model);
    j.str("family", "jm");
    j.str("model", jm_gpu_model_name(gpu_id));
    j.num("gpu_id", gpu_id);
    j.num("shader_cores", static_cast<u64>(std::popcount(in.params[DRM_PANFROST_PARAM_SHADER_PRESENT])));
    j.num("address_spaces", static_cast<u64>(std::popcount(in.params[DRM_PANFROST_PARAM_AS_PRESENT])));
    j.num("job_slots", static_cast<u64>(std::popcount(in.params[DRM_PANFROST_PARAM_JS_PRESENT])));
    j.num("va_bits", in.params[DRM_PANFROST_PARAM_MMU_FEATURES] & 0xFF);
    j.num("pa_bits", (in.params[DRM_PANFROST_PARAM_MMU_FEATURES] >> 8) & 0xFF);
    j.begin_array("js_features");
    for (unsigned i = 0; i < 16; i++)
        if (in.params[DRM_PANFROST_PARAM_JS_PRESENT] & (u64{1} << i))
            j.num(nullptr, in.params[DRM_PANFROST_PARAM_JS_FEATURES0 + i]);
    j.end_array();
    j.begin_array("texture_features");
    for (unsigned i = 0; i < 4; i++)
        j.num(nullptr, in.params[DRM_PANFROST_PARAM_TEXTURE_FEATURES0 + i]);
    j.end_array();
    j.str("selected_coherency", coherency_name(in.params[DRM_PANFROST_PARAM_SELECTED_COHERENCY]));
    j.num("hw_features", in.hw_features);
    j.begin_array("hw_feature_names");
    for (const char* n : bit_names(in.hw_features, kHwFeatureNames, panfrost::HW_FEATURES_END))
        j.str(nullptr, n);
    j.end_array();
    j.num("hw_issues", in.hw_issues);
    j.begin_array("hw_issue_names");
    for (const char* n : bit_names(in.hw_issues, kHwIssueNames, panfrost::HW_ISSUE_END))
        j.str(nullptr, n);
    j.end_array();
    j.end_object();
    j.begin_object("params");
    for (const ParamName& p : kParamNames) {
        if (in.param_ok[p.param])
            j.num(p.name, in.params[p.param]);
        else
            j.null(p.name);
    }
    j.end_object();
    j.end_object();
    j.finish();
}

int cmd_info(std::string_view gpu, bool json, std::FILE* out, std::FILE* err) {
    const upanthor::host::GpuModel* model = upanthor::host::find_gpu_model(gpu);
    if (!model) {
        std::fprintf(err, "upanthor info: --gpu %.*s: no such GPU model (models: %s)\n", static_cast<int>(gpu.size()),
                     gpu.data(), upanthor::host::gpu_model_names().c_str());
        return 2;
    }
    std::string what;
    if (model->family == "jm") {
        JmDeviceInfo info;
        const int ret = probe_jm_device_info(model->name, &info, &what);
        if (ret) {
            std::fprintf(err, "upanthor info: %s failed: %s (%d)\n", what.c_str(), std::strerror(-ret), ret);
            return 1;
        }
        if (json)
            print_jm_info_json(info, out);
        else
            print_jm_info_text(info, out);
        return 0;
    }
    DeviceInfo info;
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
