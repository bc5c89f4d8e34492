// A headless Vulkan client for Mesa's panvk on the driver (docs/mesa.md), built as a
// distribution's program is: plain C against Debian's Vulkan loader and headers. It runs with
// VK_ICD_FILENAMES naming panvk's ICD and LD_PRELOAD naming libupanthor_preload.so, so every
// Vulkan call below goes through unmodified Mesa to our panthor driver and the mock GPU.
//
//   vk_client MODE...   MODE: info memory sync work hang, or all (info memory sync work)
//
// One line per check ("ok: ..." or "FAIL: ..."); exit 0 only when every check passed.
//   info    the physical device (Mali-G610, driver properties, limits, memory, queue families);
//           vkCreateDevice+vkDestroyDevice timed
//   memory  a device with every queue of every family; each memory type allocated, mapped,
//           written, read back, freed
//   sync    empty and barrier-only submits with fences; timeline semaphores (host and queue
//           signal/wait, a chain across two queues or two submits); binary semaphores; events
//           (host and device; VK_CLIENT_SET_EVENT_DELAY_MS, default 5, is how long the host
//           waits before the vkSetEvent that releases a device-side wait); query pool reset +
//           copy with availability; secondary command buffers
//   work    vkCmdDispatch, vkCmdFillBuffer, vkCmdCopyBuffer complete (results not checked: the
//           mock runs no shader; what the memory holds afterwards is printed as information)
//   hang    a dispatch made to hang by a fault the preload injects (UPANTHOR_INJECT) must end in
//           VK_ERROR_DEVICE_LOST, and everything is then destroyed cleanly
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

// The compute shader of the `work` and `hang` modes, compiled with
//   glslangValidator -V --target-env vulkan1.0 --vn fill_comp_spv -o fill.h fill.comp
// from:
//   #version 450
//   layout(local_size_x = 64) in;
//   layout(set = 0, binding = 0) buffer Out { uint v[]; } o;
//   void main() { o.v[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * 3u + 1u; }
static const uint32_t fill_comp_spv[] = {
    0x07230203, 0x00010000, 0x0008000b, 0x0000001e, 0x00000000, 0x00020011, 0x00000001, 0x0006000b, 0x00000001,
    0x4c534c47, 0x6474732e, 0x3035342e, 0x00000000, 0x0003000e, 0x00000000, 0x00000001, 0x0006000f, 0x00000005,
    0x00000004, 0x6e69616d, 0x00000000, 0x0000000f, 0x00060010, 0x00000004, 0x00000011, 0x00000040, 0x00000001,
    0x00000001, 0x00030003, 0x00000002, 0x000001c2, 0x00040005, 0x00000004, 0x6e69616d, 0x00000000, 0x00030005,
    0x00000008, 0x0074754f, 0x00040006, 0x00000008, 0x00000000, 0x00000076, 0x00030005, 0x0000000a, 0x0000006f,
    0x00080005, 0x0000000f, 0x475f6c67, 0x61626f6c, 0x766e496c, 0x7461636f, 0x496e6f69, 0x00000044, 0x00040047,
    0x00000007, 0x00000006, 0x00000004, 0x00050048, 0x00000008, 0x00000000, 0x00000023, 0x00000000, 0x00030047,
    0x00000008, 0x00000003, 0x00040047, 0x0000000a, 0x00000022, 0x00000000, 0x00040047, 0x0000000a, 0x00000021,
    0x00000000, 0x00040047, 0x0000000f, 0x0000000b, 0x0000001c, 0x00040047, 0x0000001d, 0x0000000b, 0x00000019,
    0x00020013, 0x00000002, 0x00030021, 0x00000003, 0x00000002, 0x00040015, 0x00000006, 0x00000020, 0x00000000,
    0x0003001d, 0x00000007, 0x00000006, 0x0003001e, 0x00000008, 0x00000007, 0x00040020, 0x00000009, 0x00000002,
    0x00000008, 0x0004003b, 0x00000009, 0x0000000a, 0x00000002, 0x00040015, 0x0000000b, 0x00000020, 0x00000001,
    0x0004002b, 0x0000000b, 0x0000000c, 0x00000000, 0x00040017, 0x0000000d, 0x00000006, 0x00000003, 0x00040020,
    0x0000000e, 0x00000001, 0x0000000d, 0x0004003b, 0x0000000e, 0x0000000f, 0x00000001, 0x0004002b, 0x00000006,
    0x00000010, 0x00000000, 0x00040020, 0x00000011, 0x00000001, 0x00000006, 0x0004002b, 0x00000006, 0x00000016,
    0x00000003, 0x0004002b, 0x00000006, 0x00000018, 0x00000001, 0x00040020, 0x0000001a, 0x00000002, 0x00000006,
    0x0004002b, 0x00000006, 0x0000001c, 0x00000040, 0x0006002c, 0x0000000d, 0x0000001d, 0x0000001c, 0x00000018,
    0x00000018, 0x00050036, 0x00000002, 0x00000004, 0x00000000, 0x00000003, 0x000200f8, 0x00000005, 0x00050041,
    0x00000011, 0x00000012, 0x0000000f, 0x00000010, 0x0004003d, 0x00000006, 0x00000013, 0x00000012, 0x00050041,
    0x00000011, 0x00000014, 0x0000000f, 0x00000010, 0x0004003d, 0x00000006, 0x00000015, 0x00000014, 0x00050084,
    0x00000006, 0x00000017, 0x00000015, 0x00000016, 0x00050080, 0x00000006, 0x00000019, 0x00000017, 0x00000018,
    0x00060041, 0x0000001a, 0x0000001b, 0x0000000a, 0x0000000c, 0x00000013, 0x0003003e, 0x0000001b, 0x00000019,
    0x000100fd, 0x00010038,
};

// Bounded waits: a wedged GPU must fail a check, never hang the program (CTest's timeout is the
// last resort).
#define WAIT_NS (10ull * 1000 * 1000 * 1000)

static int failures;
static int passes;

static void check(bool ok, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    if (ok) {
        passes++;
    } else {
        failures++;
    }
}

static void note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("note: ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static const char* vk_result_name(VkResult r) {
    switch (r) {
#define R(x) \
    case x: return #x
        R(VK_SUCCESS);
        R(VK_NOT_READY);
        R(VK_TIMEOUT);
        R(VK_EVENT_SET);
        R(VK_EVENT_RESET);
        R(VK_INCOMPLETE);
        R(VK_ERROR_OUT_OF_HOST_MEMORY);
        R(VK_ERROR_OUT_OF_DEVICE_MEMORY);
        R(VK_ERROR_INITIALIZATION_FAILED);
        R(VK_ERROR_DEVICE_LOST);
        R(VK_ERROR_MEMORY_MAP_FAILED);
        R(VK_ERROR_LAYER_NOT_PRESENT);
        R(VK_ERROR_EXTENSION_NOT_PRESENT);
        R(VK_ERROR_FEATURE_NOT_PRESENT);
        R(VK_ERROR_INCOMPATIBLE_DRIVER);
        R(VK_ERROR_TOO_MANY_OBJECTS);
        R(VK_ERROR_FORMAT_NOT_SUPPORTED);
        R(VK_ERROR_UNKNOWN);
#undef R
    default: return "VkResult(?)";
    }
}

// A Vulkan call that must succeed: one check line naming it and its result.
#define VK_OK(call) vk_ok((call), #call)
static bool vk_ok(VkResult r, const char* what) {
    if (r == VK_SUCCESS) {
        return true;
    }
    check(false, "%s -> %s (%d)", what, vk_result_name(r), r);
    return false;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Instance, physical device, device.

struct ctx {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    uint32_t nfamilies;
    VkQueueFamilyProperties families[8];
    VkDevice dev;
    // Every queue of every family, in order; queue_family[i] is the family of queues[i].
    uint32_t nqueues;
    VkQueue queues[16];
    uint32_t queue_family[16];
    VkCommandPool pool;  // on family 0 (graphics|compute)
    // Timeline semaphores: core in Vulkan 1.2, VK_KHR_timeline_semaphore before (panvk 25.0 is a
    // Vulkan 1.1 device on v10).
    PFN_vkWaitSemaphores wait_semaphores;
    PFN_vkSignalSemaphore signal_semaphore;
    PFN_vkGetSemaphoreCounterValue get_semaphore_counter_value;
};

static bool make_instance(struct ctx* c) {
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "upanthor vk_client",
        .apiVersion = VK_API_VERSION_1_2,
    };
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = vkCreateInstance(&ici, NULL, &c->instance);
    check(r == VK_SUCCESS, "vkCreateInstance (Vulkan 1.2) -> %s", vk_result_name(r));
    if (r != VK_SUCCESS) {
        return false;
    }
    uint32_t n = 0;
    r = vkEnumeratePhysicalDevices(c->instance, &n, NULL);
    VkPhysicalDevice devs[8];
    if (n > 8) {
        n = 8;
    }
    if (r == VK_SUCCESS) {
        r = vkEnumeratePhysicalDevices(c->instance, &n, devs);
    }
    check(r == VK_SUCCESS && n >= 1, "vkEnumeratePhysicalDevices -> %s, %u device(s)", vk_result_name(r), n);
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devs[i], &p);
        if (strstr(p.deviceName, "Mali-G610") && !c->phys) {
            c->phys = devs[i];
            c->props = p;
        }
    }
    check(c->phys != VK_NULL_HANDLE, "a physical device named Mali-G610%s%s", c->phys ? ": " : "",
          c->phys ? c->props.deviceName : "");
    if (!c->phys) {
        return false;
    }
    vkGetPhysicalDeviceMemoryProperties(c->phys, &c->mem);
    c->nfamilies = 8;
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &c->nfamilies, c->families);
    return true;
}

// A device with every queue of every family and the timeline-semaphore feature.
static bool make_device(struct ctx* c) {
    static const float prio[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    VkDeviceQueueCreateInfo qci[8];
    uint32_t total = 0;
    for (uint32_t f = 0; f < c->nfamilies; f++) {
        uint32_t count = c->families[f].queueCount;
        if (total + count > 16) {
            count = 16 - total;
        }
        qci[f] = (VkDeviceQueueCreateInfo){
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = f,
            .queueCount = count,
            .pQueuePriorities = prio,
        };
        total += count;
    }
    VkPhysicalDeviceTimelineSemaphoreFeatures tl = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
        .timelineSemaphore = VK_TRUE,
    };
    const bool core12 = c->props.apiVersion >= VK_API_VERSION_1_2;
    const char* ext = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &tl,
        .queueCreateInfoCount = c->nfamilies,
        .pQueueCreateInfos = qci,
        .enabledExtensionCount = core12 ? 0 : 1,
        .ppEnabledExtensionNames = &ext,
    };
    VkResult r = vkCreateDevice(c->phys, &dci, NULL, &c->dev);
    check(r == VK_SUCCESS, "vkCreateDevice with %u queue family(ies), %u queue(s), timelineSemaphore%s -> %s",
          c->nfamilies, total, core12 ? "" : " (VK_KHR_timeline_semaphore)", vk_result_name(r));
    if (r != VK_SUCCESS) {
        c->dev = VK_NULL_HANDLE;
        return false;
    }
    c->wait_semaphores =
        (PFN_vkWaitSemaphores)vkGetDeviceProcAddr(c->dev, core12 ? "vkWaitSemaphores" : "vkWaitSemaphoresKHR");
    c->signal_semaphore =
        (PFN_vkSignalSemaphore)vkGetDeviceProcAddr(c->dev, core12 ? "vkSignalSemaphore" : "vkSignalSemaphoreKHR");
    c->get_semaphore_counter_value = (PFN_vkGetSemaphoreCounterValue)vkGetDeviceProcAddr(
        c->dev, core12 ? "vkGetSemaphoreCounterValue" : "vkGetSemaphoreCounterValueKHR");
    if (!c->wait_semaphores || !c->signal_semaphore || !c->get_semaphore_counter_value) {
        check(false, "vkGetDeviceProcAddr of the timeline-semaphore entry points");
        return false;
    }
    c->nqueues = 0;
    for (uint32_t f = 0; f < c->nfamilies; f++) {
        for (uint32_t i = 0; i < qci[f].queueCount; i++) {
            vkGetDeviceQueue(c->dev, f, i, &c->queues[c->nqueues]);
            c->queue_family[c->nqueues] = f;
            c->nqueues++;
        }
    }
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = 0,
    };
    return VK_OK(vkCreateCommandPool(c->dev, &pci, NULL, &c->pool));
}

static void destroy(struct ctx* c) {
    if (c->dev) {
        VkResult r = vkDeviceWaitIdle(c->dev);
        note("vkDeviceWaitIdle before teardown -> %s", vk_result_name(r));
        if (c->pool) {
            vkDestroyCommandPool(c->dev, c->pool, NULL);
        }
        vkDestroyDevice(c->dev, NULL);
    }
    if (c->instance) {
        vkDestroyInstance(c->instance, NULL);
    }
    memset(c, 0, sizeof(*c));
}

static uint32_t find_memory_type(const struct ctx* c, uint32_t type_bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < c->mem.memoryTypeCount; i++) {
        if ((type_bits & (1u << i)) && (c->mem.memoryTypes[i].propertyFlags & want) == want) {
            return i;
        }
    }
    return UINT32_MAX;
}

// A host-visible, coherent buffer bound to memory of its own, mapped.
struct buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    void* map;
    VkDeviceSize size;
};

static bool make_buffer(struct ctx* c, struct buffer* b, VkDeviceSize size, VkBufferUsageFlags usage) {
    memset(b, 0, sizeof(*b));
    b->size = size;
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    if (!VK_OK(vkCreateBuffer(c->dev, &bci, NULL, &b->buf))) {
        return false;
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(c->dev, b->buf, &req);
    uint32_t type = find_memory_type(c, req.memoryTypeBits,
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type == UINT32_MAX) {
        check(false, "a host-visible coherent memory type for a buffer (bits 0x%x)", req.memoryTypeBits);
        return false;
    }
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    return VK_OK(vkAllocateMemory(c->dev, &mai, NULL, &b->mem)) &&
           VK_OK(vkBindBufferMemory(c->dev, b->buf, b->mem, 0)) &&
           VK_OK(vkMapMemory(c->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
}

static void free_buffer(struct ctx* c, struct buffer* b) {
    if (b->map) {
        vkUnmapMemory(c->dev, b->mem);
    }
    if (b->buf) {
        vkDestroyBuffer(c->dev, b->buf, NULL);
    }
    if (b->mem) {
        vkFreeMemory(c->dev, b->mem, NULL);
    }
    memset(b, 0, sizeof(*b));
}

static VkCommandBuffer begin_cmd(struct ctx* c, VkCommandBufferLevel level) {
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = c->pool,
        .level = level,
        .commandBufferCount = 1,
    };
    VkCommandBuffer cb = VK_NULL_HANDLE;
    if (!VK_OK(vkAllocateCommandBuffers(c->dev, &ai, &cb))) {
        return VK_NULL_HANDLE;
    }
    VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
        .pInheritanceInfo = level == VK_COMMAND_BUFFER_LEVEL_SECONDARY ? &inh : NULL,
    };
    if (!VK_OK(vkBeginCommandBuffer(cb, &bi))) {
        vkFreeCommandBuffers(c->dev, c->pool, 1, &cb);
        return VK_NULL_HANDLE;
    }
    return cb;
}

static VkFence make_fence(struct ctx* c) {
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence f = VK_NULL_HANDLE;
    VK_OK(vkCreateFence(c->dev, &fci, NULL, &f));
    return f;
}

// Ends `cb` (if any), submits it on `queue` with a fence and waits for the fence; one check line.
// Returns the result of the submit or the wait.
static VkResult submit_and_wait(struct ctx* c, VkQueue queue, VkCommandBuffer cb, const char* what) {
    VkResult r = VK_SUCCESS;
    if (cb) {
        r = vkEndCommandBuffer(cb);
    }
    VkFence fence = make_fence(c);
    double t0 = now_ms();
    if (r == VK_SUCCESS) {
        VkSubmitInfo si = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = cb ? 1 : 0,
            .pCommandBuffers = &cb,
        };
        r = vkQueueSubmit(queue, 1, &si, fence);
    }
    if (r == VK_SUCCESS) {
        r = vkWaitForFences(c->dev, 1, &fence, VK_TRUE, WAIT_NS);
    }
    check(r == VK_SUCCESS, "%s: submit + fence wait -> %s (%.1f ms)", what, vk_result_name(r), now_ms() - t0);
    vkDestroyFence(c->dev, fence, NULL);
    if (cb) {
        vkFreeCommandBuffers(c->dev, c->pool, 1, &cb);
    }
    return r;
}

// ---------------------------------------------------------------------------------------------
// info

static int mode_info(void) {
    struct ctx c = {0};
    if (!make_instance(&c)) {
        destroy(&c);
        return 1;
    }
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &drv};
    vkGetPhysicalDeviceProperties2(c.phys, &p2);
    const VkPhysicalDeviceProperties* p = &c.props;
    check(drv.driverID == VK_DRIVER_ID_MESA_PANVK, "driverID %d is VK_DRIVER_ID_MESA_PANVK (%d)", drv.driverID,
          VK_DRIVER_ID_MESA_PANVK);
    check(strcmp(drv.driverName, "panvk") == 0, "driverName \"%s\" is \"panvk\" (driverInfo \"%s\")", drv.driverName,
          drv.driverInfo);
    check(p->vendorID == 0x13b5, "vendorID 0x%x is Arm's 0x13b5", p->vendorID);
    check(p->deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, "deviceType %d is INTEGRATED_GPU", p->deviceType);
    check(VK_API_VERSION_MAJOR(p->apiVersion) == 1 && VK_API_VERSION_MINOR(p->apiVersion) >= 1,
          "apiVersion %u.%u.%u >= 1.1", VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion),
          VK_API_VERSION_PATCH(p->apiVersion));
    const VkPhysicalDeviceLimits* l = &p->limits;
    check(l->maxComputeWorkGroupInvocations >= 128 && l->maxComputeWorkGroupSize[0] >= 128 &&
              l->maxComputeWorkGroupCount[0] >= 65535,
          "compute limits: %u invocations, size %u x %u x %u, count %u", l->maxComputeWorkGroupInvocations,
          l->maxComputeWorkGroupSize[0], l->maxComputeWorkGroupSize[1], l->maxComputeWorkGroupSize[2],
          l->maxComputeWorkGroupCount[0]);
    check(l->maxImageDimension2D >= 4096 && l->maxBoundDescriptorSets >= 4 && l->maxMemoryAllocationCount >= 4096 &&
              l->maxPushConstantsSize >= 128,
          "limits: image2D %u, descriptor sets %u, allocations %u, push constants %u", l->maxImageDimension2D,
          l->maxBoundDescriptorSets, l->maxMemoryAllocationCount, l->maxPushConstantsSize);
    check(l->nonCoherentAtomSize > 0 && (l->nonCoherentAtomSize & (l->nonCoherentAtomSize - 1)) == 0 &&
              l->minStorageBufferOffsetAlignment > 0 && l->minStorageBufferOffsetAlignment <= 256,
          "alignments: nonCoherentAtomSize %llu, storage buffer offset %llu",
          (unsigned long long)l->nonCoherentAtomSize, (unsigned long long)l->minStorageBufferOffsetAlignment);
    note("timestampPeriod %.3f ns, timestampComputeAndGraphics %u", l->timestampPeriod, l->timestampComputeAndGraphics);

    bool host_coherent = false;
    for (uint32_t i = 0; i < c.mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = c.mem.memoryTypes[i].propertyFlags;
        note("memory type %u: heap %u, flags 0x%x", i, c.mem.memoryTypes[i].heapIndex, f);
        if ((f & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) ==
            (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
            host_coherent = true;
        }
    }
    check(c.mem.memoryHeapCount >= 1 && c.mem.memoryHeaps[0].size > 0, "%u memory heap(s), heap 0 %llu MiB",
          c.mem.memoryHeapCount, (unsigned long long)(c.mem.memoryHeaps[0].size >> 20));
    check(host_coherent, "a HOST_VISIBLE|HOST_COHERENT memory type among %u", c.mem.memoryTypeCount);
    uint32_t queues = 0;
    for (uint32_t f = 0; f < c.nfamilies; f++) {
        note("queue family %u: flags 0x%x, %u queue(s), timestampValidBits %u", f, c.families[f].queueFlags,
             c.families[f].queueCount, c.families[f].timestampValidBits);
        queues += c.families[f].queueCount;
    }
    check(c.nfamilies >= 1 && (c.families[0].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) ==
                                  (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT),
          "%u queue family(ies), %u queue(s); family 0 has GRAPHICS|COMPUTE", c.nfamilies, queues);

    // Device creation and destruction: panvk runs one init stream per subqueue on the GPU before
    // vkCreateDevice returns (docs/mesa.md).
    double best = 1e9;
    for (int i = 0; i < 3; i++) {
        float prio = 1.0f;
        VkDeviceQueueCreateInfo qci = {
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = 0,
            .queueCount = 1,
            .pQueuePriorities = &prio,
        };
        VkDeviceCreateInfo dci = {
            .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
            .queueCreateInfoCount = 1,
            .pQueueCreateInfos = &qci,
        };
        VkDevice dev;
        double t0 = now_ms();
        VkResult r = vkCreateDevice(c.phys, &dci, NULL, &dev);
        double t1 = now_ms();
        if (r == VK_SUCCESS) {
            vkDestroyDevice(dev, NULL);
        }
        double t2 = now_ms();
        check(r == VK_SUCCESS, "vkCreateDevice + vkDestroyDevice #%d -> %s: create %.2f ms, destroy %.2f ms", i + 1,
              vk_result_name(r), t1 - t0, t2 - t1);
        if (t2 - t0 < best) {
            best = t2 - t0;
        }
    }
    note("device create+destroy: best of 3 %.2f ms", best);
    destroy(&c);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// memory

static int mode_memory(void) {
    struct ctx c = {0};
    if (!make_instance(&c) || !make_device(&c)) {
        destroy(&c);
        return 1;
    }
    check(c.nqueues >= 1, "vkGetDeviceQueue: %u queue(s) of %u family(ies)", c.nqueues, c.nfamilies);
    for (uint32_t i = 0; i < c.nqueues; i++) {
        VkResult r = vkQueueWaitIdle(c.queues[i]);
        check(r == VK_SUCCESS, "vkQueueWaitIdle on queue %u (family %u) -> %s", i, c.queue_family[i],
              vk_result_name(r));
    }
    const VkDeviceSize size = 256 * 1024;
    for (uint32_t t = 0; t < c.mem.memoryTypeCount; t++) {
        VkMemoryPropertyFlags flags = c.mem.memoryTypes[t].propertyFlags;
        VkMemoryAllocateInfo mai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = size,
            .memoryTypeIndex = t,
        };
        VkDeviceMemory mem;
        VkResult r = vkAllocateMemory(c.dev, &mai, NULL, &mem);
        check(r == VK_SUCCESS, "memory type %u (flags 0x%x): vkAllocateMemory %llu KiB -> %s", t, flags,
              (unsigned long long)(size >> 10), vk_result_name(r));
        if (r != VK_SUCCESS) {
            continue;
        }
        if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
            uint32_t* p = NULL;
            r = vkMapMemory(c.dev, mem, 0, VK_WHOLE_SIZE, 0, (void**)&p);
            check(r == VK_SUCCESS && p, "memory type %u: vkMapMemory -> %s", t, vk_result_name(r));
            if (r == VK_SUCCESS) {
                size_t n = size / sizeof(uint32_t);
                for (size_t i = 0; i < n; i++) {
                    p[i] = (uint32_t)(i * 2654435761u) ^ t;
                }
                VkMappedMemoryRange range = {
                    .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                    .memory = mem,
                    .size = VK_WHOLE_SIZE,
                };
                if (!(flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
                    VK_OK(vkFlushMappedMemoryRanges(c.dev, 1, &range));
                }
                vkUnmapMemory(c.dev, mem);
                // Mapped again: the same pages must come back.
                p = NULL;
                r = vkMapMemory(c.dev, mem, 0, VK_WHOLE_SIZE, 0, (void**)&p);
                if (r == VK_SUCCESS && !(flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
                    VK_OK(vkInvalidateMappedMemoryRanges(c.dev, 1, &range));
                }
                size_t bad = 0;
                for (size_t i = 0; r == VK_SUCCESS && i < n; i++) {
                    bad += p[i] != ((uint32_t)(i * 2654435761u) ^ t);
                }
                check(r == VK_SUCCESS && bad == 0,
                      "memory type %u: written, unmapped, mapped again, read back: %zu of %zu words differ (%s)", t,
                      bad, n, vk_result_name(r));
                if (r == VK_SUCCESS) {
                    vkUnmapMemory(c.dev, mem);
                }
            }
        } else {
            note("memory type %u is not host-visible: allocated and freed only", t);
        }
        vkFreeMemory(c.dev, mem, NULL);
    }
    // Many small allocations at once (each one is a BO and a VM_BIND).
    VkDeviceMemory many[64];
    uint32_t made = 0;
    for (; made < 64; made++) {
        VkMemoryAllocateInfo mai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = 4096 * (1 + made % 4),
            .memoryTypeIndex = 0,
        };
        if (vkAllocateMemory(c.dev, &mai, NULL, &many[made]) != VK_SUCCESS) {
            break;
        }
    }
    check(made == 64, "64 small allocations live at once: %u made", made);
    for (uint32_t i = 0; i < made; i++) {
        vkFreeMemory(c.dev, many[i], NULL);
    }
    destroy(&c);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// sync

static VkSemaphore make_semaphore(struct ctx* c, bool timeline, uint64_t initial) {
    VkSemaphoreTypeCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = initial,
    };
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = timeline ? &tci : NULL};
    VkSemaphore s = VK_NULL_HANDLE;
    VK_OK(vkCreateSemaphore(c->dev, &sci, NULL, &s));
    return s;
}

// One submit with no command buffers: waits `wait` (value `wv`, 0 for a binary semaphore or none)
// and signals `sig` (value `sv`).
static VkResult submit_sync(VkQueue q, VkSemaphore wait, uint64_t wv, VkSemaphore sig, uint64_t sv, VkFence fence) {
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo tsi = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = wait ? 1 : 0,
        .pWaitSemaphoreValues = &wv,
        .signalSemaphoreValueCount = sig ? 1 : 0,
        .pSignalSemaphoreValues = &sv,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &tsi,
        .waitSemaphoreCount = wait ? 1 : 0,
        .pWaitSemaphores = &wait,
        .pWaitDstStageMask = &stage,
        .signalSemaphoreCount = sig ? 1 : 0,
        .pSignalSemaphores = &sig,
    };
    return vkQueueSubmit(q, 1, &si, fence);
}

static VkResult wait_value(struct ctx* c, VkSemaphore s, uint64_t v, uint64_t timeout) {
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &s,
        .pValues = &v,
    };
    return c->wait_semaphores(c->dev, &wi, timeout);
}

static VkResult signal_value(struct ctx* c, VkSemaphore s, uint64_t v) {
    VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = s, .value = v};
    return c->signal_semaphore(c->dev, &si);
}

static uint64_t counter(struct ctx* c, VkSemaphore s) {
    uint64_t v = ~0ull;
    VK_OK(c->get_semaphore_counter_value(c->dev, s, &v));
    return v;
}

static void sleep_ms(int ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void sync_fences(struct ctx* c) {
    VkQueue q = c->queues[0];
    // No submit info at all, only a fence: the queue signals it when earlier work is done.
    VkFence f = make_fence(c);
    VkResult r = vkQueueSubmit(q, 0, NULL, f);
    if (r == VK_SUCCESS) {
        r = vkWaitForFences(c->dev, 1, &f, VK_TRUE, WAIT_NS);
    }
    check(r == VK_SUCCESS, "fence-only vkQueueSubmit (0 submits) + wait -> %s", vk_result_name(r));
    r = vkGetFenceStatus(c->dev, f);
    check(r == VK_SUCCESS, "vkGetFenceStatus after the wait -> %s", vk_result_name(r));
    r = vkResetFences(c->dev, 1, &f);
    VkResult st = vkGetFenceStatus(c->dev, f);
    check(r == VK_SUCCESS && st == VK_NOT_READY, "vkResetFences -> %s, then status %s", vk_result_name(r),
          vk_result_name(st));
    vkDestroyFence(c->dev, f, NULL);

    submit_and_wait(c, q, VK_NULL_HANDLE, "empty submit (0 command buffers)");
    VkCommandBuffer cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        submit_and_wait(c, q, cb, "empty command buffer");
    }
    cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        VkMemoryBarrier mb = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_HOST_READ_BIT,
        };
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                             NULL);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                             NULL, 0, NULL);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_VERTEX_SHADER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, 1, &mb,
                             0, NULL, 0, NULL);
        submit_and_wait(c, q, cb, "barrier-only command buffer (3 barriers)");
    }
    // Several submissions in flight, one fence each, waited all at once.
    VkFence fs[4];
    r = VK_SUCCESS;
    for (int i = 0; i < 4; i++) {
        fs[i] = make_fence(c);
        if (r == VK_SUCCESS) {
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
            r = vkQueueSubmit(q, 1, &si, fs[i]);
        }
    }
    if (r == VK_SUCCESS) {
        r = vkWaitForFences(c->dev, 4, fs, VK_TRUE, WAIT_NS);
    }
    check(r == VK_SUCCESS, "4 submits in flight, vkWaitForFences(all) -> %s", vk_result_name(r));
    for (int i = 0; i < 4; i++) {
        vkDestroyFence(c->dev, fs[i], NULL);
    }
    r = vkQueueWaitIdle(q);
    check(r == VK_SUCCESS, "vkQueueWaitIdle -> %s", vk_result_name(r));
    r = vkDeviceWaitIdle(c->dev);
    check(r == VK_SUCCESS, "vkDeviceWaitIdle -> %s", vk_result_name(r));
}

static void sync_timelines(struct ctx* c) {
    VkQueue q0 = c->queues[0];
    VkQueue q1 = c->nqueues > 1 ? c->queues[1] : c->queues[0];
    VkSemaphore s = make_semaphore(c, true, 5);
    check(counter(c, s) == 5, "timeline created with initial value 5: counter %llu", (unsigned long long)counter(c, s));
    VkResult r = signal_value(c, s, 7);
    check(r == VK_SUCCESS && counter(c, s) == 7, "host vkSignalSemaphore(7) -> %s, counter %llu", vk_result_name(r),
          (unsigned long long)counter(c, s));
    r = wait_value(c, s, 6, 0);
    check(r == VK_SUCCESS, "host vkWaitSemaphores(6) on a signalled value, timeout 0 -> %s", vk_result_name(r));
    r = wait_value(c, s, 8, 1000000);
    check(r == VK_TIMEOUT, "host vkWaitSemaphores(8) on an unsignalled value, 1 ms -> %s", vk_result_name(r));

    // Queue signals, host waits.
    r = submit_sync(q0, VK_NULL_HANDLE, 0, s, 10, VK_NULL_HANDLE);
    if (r == VK_SUCCESS) {
        r = wait_value(c, s, 10, WAIT_NS);
    }
    check(r == VK_SUCCESS && counter(c, s) == 10, "queue signals 10, host waits -> %s, counter %llu", vk_result_name(r),
          (unsigned long long)counter(c, s));

    // Host signals, queue waits (wait-before-signal: the submission is held until the host
    // signal), then the queue signals another timeline.
    VkSemaphore s2 = make_semaphore(c, true, 0);
    r = submit_sync(q0, s, 11, s2, 1, VK_NULL_HANDLE);
    check(r == VK_SUCCESS, "submit waiting on host value 11 (not yet signalled) -> %s", vk_result_name(r));
    VkResult early = wait_value(c, s2, 1, 20 * 1000000ull);
    check(early == VK_TIMEOUT, "the waiting submission has not signalled before the host signal: %s",
          vk_result_name(early));
    r = signal_value(c, s, 11);
    if (r == VK_SUCCESS) {
        r = wait_value(c, s2, 1, WAIT_NS);
    }
    check(r == VK_SUCCESS, "host signals 11, the queue's signal of the other timeline arrives -> %s",
          vk_result_name(r));

    // A chain across two queues (or two submissions on one queue): host -> A -> B -> host.
    if (q1 == q0) {
        note("the device has %u queue: the chain runs across two submissions on queue 0", c->nqueues);
    }
    VkSemaphore s3 = make_semaphore(c, true, 0);
    VkResult ra = submit_sync(q0, s3, 1, s3, 2, VK_NULL_HANDLE);
    VkResult rb = submit_sync(q1, s3, 2, s3, 3, VK_NULL_HANDLE);
    check(ra == VK_SUCCESS && rb == VK_SUCCESS, "chain submitted: %s waits 1 signals 2, %s waits 2 signals 3 -> %s, %s",
          "queue 0", q1 == q0 ? "queue 0 again" : "queue 1", vk_result_name(ra), vk_result_name(rb));
    r = signal_value(c, s3, 1);
    if (r == VK_SUCCESS) {
        r = wait_value(c, s3, 3, WAIT_NS);
    }
    check(r == VK_SUCCESS && counter(c, s3) == 3, "host signals 1, chain reaches 3 -> %s, counter %llu",
          vk_result_name(r), (unsigned long long)counter(c, s3));

    // Wait for any of two timelines.
    VkSemaphore both[2] = {s2, s3};
    uint64_t vals[2] = {100, 3};
    VkSemaphoreWaitInfo any = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .flags = VK_SEMAPHORE_WAIT_ANY_BIT,
        .semaphoreCount = 2,
        .pSemaphores = both,
        .pValues = vals,
    };
    r = c->wait_semaphores(c->dev, &any, WAIT_NS);
    check(r == VK_SUCCESS, "vkWaitSemaphores(ANY) with one of two values reached -> %s", vk_result_name(r));
    VK_OK(vkQueueWaitIdle(q0));
    if (q1 != q0) {
        VK_OK(vkQueueWaitIdle(q1));
    }
    vkDestroySemaphore(c->dev, s, NULL);
    vkDestroySemaphore(c->dev, s2, NULL);
    vkDestroySemaphore(c->dev, s3, NULL);

    // Binary semaphores: submission 1 signals, submission 2 waits and signals a fence.
    VkSemaphore b = make_semaphore(c, false, 0);
    VkFence f = make_fence(c);
    ra = submit_sync(q0, VK_NULL_HANDLE, 0, b, 0, VK_NULL_HANDLE);
    rb = submit_sync(q1, b, 0, VK_NULL_HANDLE, 0, f);
    r = ra != VK_SUCCESS ? ra : rb;
    if (r == VK_SUCCESS) {
        r = vkWaitForFences(c->dev, 1, &f, VK_TRUE, WAIT_NS);
    }
    check(r == VK_SUCCESS, "binary semaphore: submit signals, next submit waits, its fence -> %s", vk_result_name(r));
    vkDestroyFence(c->dev, f, NULL);
    vkDestroySemaphore(c->dev, b, NULL);
}

static void sync_events(struct ctx* c) {
    VkQueue q = c->queues[0];
    VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent ev = VK_NULL_HANDLE, ev2 = VK_NULL_HANDLE;
    if (!VK_OK(vkCreateEvent(c->dev, &eci, NULL, &ev)) || !VK_OK(vkCreateEvent(c->dev, &eci, NULL, &ev2))) {
        return;
    }
    VkResult st = vkGetEventStatus(c->dev, ev);
    check(st == VK_EVENT_RESET, "new event: status %s", vk_result_name(st));
    VkResult r = vkSetEvent(c->dev, ev);
    st = vkGetEventStatus(c->dev, ev);
    check(r == VK_SUCCESS && st == VK_EVENT_SET, "host vkSetEvent -> %s, status %s", vk_result_name(r),
          vk_result_name(st));
    r = vkResetEvent(c->dev, ev);
    st = vkGetEventStatus(c->dev, ev);
    check(r == VK_SUCCESS && st == VK_EVENT_RESET, "host vkResetEvent -> %s, status %s", vk_result_name(r),
          vk_result_name(st));

    // The device sets the event, waits on it, the host sees it set.
    VkCommandBuffer cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        vkCmdSetEvent(cb, ev, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        vkCmdWaitEvents(cb, 1, &ev, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0,
                        NULL, 0, NULL);
        if (submit_and_wait(c, q, cb, "vkCmdSetEvent + vkCmdWaitEvents") == VK_SUCCESS) {
            st = vkGetEventStatus(c->dev, ev);
            check(st == VK_EVENT_SET, "after the device's vkCmdSetEvent the host sees %s", vk_result_name(st));
        }
    }
    // The device resets it.
    cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        vkCmdResetEvent(cb, ev, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        if (submit_and_wait(c, q, cb, "vkCmdResetEvent") == VK_SUCCESS) {
            st = vkGetEventStatus(c->dev, ev);
            check(st == VK_EVENT_RESET, "after the device's vkCmdResetEvent the host sees %s", vk_result_name(st));
        }
    }
    // The device waits for an event that only the host sets, after the submission (the command
    // stream polls the event's memory).
    cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        // srcStageMask names ALL_COMMANDS besides HOST: panvk 25.0 waits only on the subqueues
        // the source stages map to, and HOST alone maps to none (no wait is emitted at all).
        vkCmdWaitEvents(cb, 1, &ev2, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0, NULL, 0, NULL);
        VkFence f = make_fence(c);
        r = vkEndCommandBuffer(cb);
        if (r == VK_SUCCESS) {
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
            r = vkQueueSubmit(q, 1, &si, f);
        }
        check(r == VK_SUCCESS, "submit of vkCmdWaitEvents on an unset event -> %s", vk_result_name(r));
        if (r == VK_SUCCESS) {
            VkResult early = vkWaitForFences(c->dev, 1, &f, VK_TRUE, 20 * 1000000ull);
            check(early == VK_TIMEOUT, "the device waits for the host's event: fence after 20 ms -> %s",
                  vk_result_name(early));
            // VK_CLIENT_SET_EVENT_DELAY_MS (default 5) delays the host's store: at 200 ms every
            // group is idle long enough for the device to autosuspend first (mesa_sync_late_event).
            const char* delay = getenv("VK_CLIENT_SET_EVENT_DELAY_MS");
            sleep_ms(delay && *delay ? atoi(delay) : 5);
            r = vkSetEvent(c->dev, ev2);
            double t0 = now_ms();
            if (r == VK_SUCCESS) {
                r = vkWaitForFences(c->dev, 1, &f, VK_TRUE, WAIT_NS);
            }
            check(r == VK_SUCCESS, "host vkSetEvent releases the device's wait: fence -> %s (%.1f ms)",
                  vk_result_name(r), now_ms() - t0);
        }
        vkDestroyFence(c->dev, f, NULL);
        vkFreeCommandBuffers(c->dev, c->pool, 1, &cb);
    }
    vkDestroyEvent(c->dev, ev, NULL);
    vkDestroyEvent(c->dev, ev2, NULL);
}

static void sync_queries(struct ctx* c) {
    VkQueue q = c->queues[0];
    enum { N = 4 };
    VkQueryPoolCreateInfo qpci = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_OCCLUSION,
        .queryCount = N,
    };
    VkQueryPool pool;
    if (!VK_OK(vkCreateQueryPool(c->dev, &qpci, NULL, &pool))) {
        return;
    }
    // The copy's availability words: 32-bit results (stride 8: result, availability), then
    // 64-bit results (stride 16). panvk 25.0 stores the availability as one 32-bit register in
    // both cases, so with 64_BIT only the low half of the 64-bit availability word is written
    // (the high half keeps what the buffer held): checked as such, and printed.
    struct buffer dst;
    if (make_buffer(c, &dst, 4096, VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT)) {
        uint32_t* w32 = dst.map;
        uint64_t* w64 = (uint64_t*)((char*)dst.map + 1024);
        memset(dst.map, 0xAA, 4096);
        VkCommandBuffer cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
        if (cb) {
            vkCmdResetQueryPool(cb, pool, 0, N);
            vkCmdCopyQueryPoolResults(cb, pool, 0, N, dst.buf, 0, 8, VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
            vkCmdCopyQueryPoolResults(cb, pool, 0, N, dst.buf, 1024, 16,
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
            if (submit_and_wait(c, q, cb, "vkCmdResetQueryPool + 2 x vkCmdCopyQueryPoolResults(WITH_AVAILABILITY)") ==
                VK_SUCCESS) {
                int zero32 = 0, zero64 = 0;
                for (int i = 0; i < N; i++) {
                    zero32 += w32[i * 2 + 1] == 0;
                    zero64 += (uint32_t)w64[i * 2 + 1] == 0;
                }
                check(zero32 == N, "32-bit copy: availability 0 for the %d reset queries: %d of %d (query 0: 0x%x)", N,
                      zero32, N, w32[1]);
                check(zero64 == N,
                      "64-bit copy: availability 0 (low half) for the %d reset queries: %d of %d (query 0: 0x%llx)", N,
                      zero64, N, (unsigned long long)w64[1]);
                if (w64[1] >> 32) {
                    note(
                        "64-bit copy: the availability's high half was not written (0x%llx): panvk 25.0 stores 32 bits",
                        (unsigned long long)w64[1]);
                }
                check(w32[N * 2] == 0xAAAAAAAAu && w64[N * 2] == 0xAAAAAAAAAAAAAAAAull,
                      "the copies wrote nothing past their last entry");
            }
        }
        uint64_t host[N * 2];
        VkResult r = vkGetQueryPoolResults(c->dev, pool, 0, N, sizeof(host), host, 16,
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        check(r == VK_NOT_READY && host[1] == 0, "vkGetQueryPoolResults on reset queries -> %s, availability %llu",
              vk_result_name(r), (unsigned long long)host[1]);
        free_buffer(c, &dst);
    }
    vkDestroyQueryPool(c->dev, pool, NULL);
}

static void sync_secondary(struct ctx* c) {
    VkQueue q = c->queues[0];
    VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent ev;
    if (!VK_OK(vkCreateEvent(c->dev, &eci, NULL, &ev))) {
        return;
    }
    // Two secondaries: one sets the event, one is only a barrier; the primary runs both.
    VkCommandBuffer sec[2];
    sec[0] = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    sec[1] = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    VkCommandBuffer cb = begin_cmd(c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (sec[0] && sec[1] && cb) {
        vkCmdSetEvent(sec[0], ev, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        VkMemoryBarrier mb = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT,
        };
        vkCmdPipelineBarrier(sec[1], VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb,
                             0, NULL, 0, NULL);
        bool ended = VK_OK(vkEndCommandBuffer(sec[0])) && VK_OK(vkEndCommandBuffer(sec[1]));
        if (ended) {
            vkCmdExecuteCommands(cb, 2, sec);
            vkCmdExecuteCommands(cb, 1, &sec[1]);
            if (submit_and_wait(c, q, cb, "vkCmdExecuteCommands of 2 secondaries, then 1 again") == VK_SUCCESS) {
                VkResult st = vkGetEventStatus(c->dev, ev);
                check(st == VK_EVENT_SET, "the secondary's vkCmdSetEvent ran: host sees %s", vk_result_name(st));
            }
            cb = VK_NULL_HANDLE;
        }
    }
    if (cb) {
        vkFreeCommandBuffers(c->dev, c->pool, 1, &cb);
    }
    for (int i = 0; i < 2; i++) {
        if (sec[i]) {
            vkFreeCommandBuffers(c->dev, c->pool, 1, &sec[i]);
        }
    }
    vkDestroyEvent(c->dev, ev, NULL);
}

static int mode_sync(void) {
    struct ctx c = {0};
    if (!make_instance(&c) || !make_device(&c)) {
        destroy(&c);
        return 1;
    }
    sync_fences(&c);
    sync_timelines(&c);
    sync_events(&c);
    sync_queries(&c);
    sync_secondary(&c);
    destroy(&c);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// work: compute dispatch, fill, copy

struct compute {
    VkShaderModule module;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool dpool;
    VkDescriptorSet set;
};

static bool make_compute(struct ctx* c, struct compute* k, struct buffer* out) {
    memset(k, 0, sizeof(*k));
    VkShaderModuleCreateInfo smci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = sizeof(fill_comp_spv),
        .pCode = fill_comp_spv,
    };
    VkDescriptorSetLayoutBinding binding = {
        .binding = 0,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
    };
    VkDescriptorSetLayoutCreateInfo dslci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 1,
        .pBindings = &binding,
    };
    if (!VK_OK(vkCreateShaderModule(c->dev, &smci, NULL, &k->module)) ||
        !VK_OK(vkCreateDescriptorSetLayout(c->dev, &dslci, NULL, &k->dsl))) {
        return false;
    }
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &k->dsl,
    };
    if (!VK_OK(vkCreatePipelineLayout(c->dev, &plci, NULL, &k->layout))) {
        return false;
    }
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->module,
                .pName = "main",
            },
        .layout = k->layout,
    };
    double t0 = now_ms();
    VkResult r = vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 1, &cpci, NULL, &k->pipeline);
    check(r == VK_SUCCESS, "vkCreateComputePipelines (SPIR-V -> NIR -> Valhall on the CPU) -> %s (%.1f ms)",
          vk_result_name(r), now_ms() - t0);
    if (r != VK_SUCCESS) {
        k->pipeline = VK_NULL_HANDLE;
        return false;
    }
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1};
    VkDescriptorPoolCreateInfo dpci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 1,
        .poolSizeCount = 1,
        .pPoolSizes = &ps,
    };
    if (!VK_OK(vkCreateDescriptorPool(c->dev, &dpci, NULL, &k->dpool))) {
        return false;
    }
    VkDescriptorSetAllocateInfo dsai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = k->dpool,
        .descriptorSetCount = 1,
        .pSetLayouts = &k->dsl,
    };
    if (!VK_OK(vkAllocateDescriptorSets(c->dev, &dsai, &k->set))) {
        return false;
    }
    VkDescriptorBufferInfo dbi = {.buffer = out->buf, .offset = 0, .range = VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = k->set,
        .dstBinding = 0,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &dbi,
    };
    vkUpdateDescriptorSets(c->dev, 1, &w, 0, NULL);
    return true;
}

static void free_compute(struct ctx* c, struct compute* k) {
    if (k->dpool) {
        vkDestroyDescriptorPool(c->dev, k->dpool, NULL);
    }
    if (k->pipeline) {
        vkDestroyPipeline(c->dev, k->pipeline, NULL);
    }
    if (k->layout) {
        vkDestroyPipelineLayout(c->dev, k->layout, NULL);
    }
    if (k->dsl) {
        vkDestroyDescriptorSetLayout(c->dev, k->dsl, NULL);
    }
    if (k->module) {
        vkDestroyShaderModule(c->dev, k->module, NULL);
    }
    memset(k, 0, sizeof(*k));
}

static void record_dispatch(VkCommandBuffer cb, struct compute* k, uint32_t groups) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &k->set, 0, NULL);
    vkCmdDispatch(cb, groups, 1, 1);
}

// How many of the buffer's words hold `value` (information only: the mock runs no shader).
static size_t count_words(const struct buffer* b, uint32_t value) {
    const uint32_t* w = b->map;
    size_t n = 0;
    for (size_t i = 0; i < b->size / 4; i++) {
        n += w[i] == value;
    }
    return n;
}

static int mode_work(void) {
    struct ctx c = {0};
    if (!make_instance(&c) || !make_device(&c)) {
        destroy(&c);
        return 1;
    }
    VkQueue q = c.queues[0];
    const VkDeviceSize size = 64 * 1024;
    const VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    struct buffer src, dst;
    if (!make_buffer(&c, &src, size, usage) || !make_buffer(&c, &dst, size, usage)) {
        destroy(&c);
        return 1;
    }
    memset(src.map, 0x5A, size);
    memset(dst.map, 0, size);

    struct compute k;
    if (make_compute(&c, &k, &dst)) {
        VkCommandBuffer cb = begin_cmd(&c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
        if (cb) {
            record_dispatch(cb, &k, (uint32_t)(size / 4 / 64));
            if (submit_and_wait(&c, q, cb, "vkCmdDispatch(256, 1, 1)") == VK_SUCCESS) {
                note("dispatch: %zu of %llu words hold the shader's value for index 5 (the mock runs no shader)",
                     count_words(&dst, 16), (unsigned long long)(size / 4));
            }
        }
        // Two dispatches with a barrier between them, and a dispatch in a secondary.
        cb = begin_cmd(&c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
        if (cb) {
            record_dispatch(cb, &k, 4);
            VkMemoryBarrier mb = {
                .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
            };
            vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                                 &mb, 0, NULL, 0, NULL);
            vkCmdDispatch(cb, 4, 1, 1);
            submit_and_wait(&c, q, cb, "2 x vkCmdDispatch(4, 1, 1) with a barrier between");
        }
    }

    VkCommandBuffer cb = begin_cmd(&c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        vkCmdFillBuffer(cb, dst.buf, 0, VK_WHOLE_SIZE, 0x12345678u);
        if (submit_and_wait(&c, q, cb, "vkCmdFillBuffer(64 KiB, 0x12345678)") == VK_SUCCESS) {
            note("fill: %zu of %llu words hold 0x12345678 (the mock runs no shader)", count_words(&dst, 0x12345678u),
                 (unsigned long long)(size / 4));
        }
    }
    cb = begin_cmd(&c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        VkBufferCopy region = {.srcOffset = 0, .dstOffset = 0, .size = size};
        vkCmdCopyBuffer(cb, src.buf, dst.buf, 1, &region);
        if (submit_and_wait(&c, q, cb, "vkCmdCopyBuffer(64 KiB)") == VK_SUCCESS) {
            note("copy: %zu of %llu words hold the source's 0x5a5a5a5a (the mock runs no shader)",
                 count_words(&dst, 0x5A5A5A5Au), (unsigned long long)(size / 4));
        }
    }
    cb = begin_cmd(&c, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    if (cb) {
        uint32_t data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        vkCmdUpdateBuffer(cb, dst.buf, 256, sizeof(data), data);
        submit_and_wait(&c, q, cb, "vkCmdUpdateBuffer(64 bytes)");
    }
    free_compute(&c, &k);
    free_buffer(&c, &src);
    free_buffer(&c, &dst);
    destroy(&c);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// hang: run under UPANTHOR_INJECT (a fault the preload arms in the mock GPU, e.g. a shader that
// never completes); the submission must end in VK_ERROR_DEVICE_LOST, not hang, and the program
// must tear everything down and exit normally (the driver's leak report at exit fails the test).

static int mode_hang(void) {
    const char* spec = getenv("UPANTHOR_INJECT");
    note("UPANTHOR_INJECT=%s", spec ? spec : "(unset)");
    check(spec && *spec, "UPANTHOR_INJECT names the fault to arm");
    struct ctx c = {0};
    if (!make_instance(&c) || !make_device(&c)) {
        destroy(&c);
        return 1;
    }
    VkQueue q = c.queues[0];
    struct buffer out;
    struct compute k;
    bool ready = make_buffer(&c, &out, 4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT) &&
                 make_compute(&c, &k, &out);
    VkCommandBuffer cb = ready ? begin_cmd(&c, VK_COMMAND_BUFFER_LEVEL_PRIMARY) : VK_NULL_HANDLE;
    if (cb) {
        record_dispatch(cb, &k, 1);
        VkResult r = vkEndCommandBuffer(cb);
        VkFence f = make_fence(&c);
        double t0 = now_ms();
        if (r == VK_SUCCESS) {
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
            r = vkQueueSubmit(q, 1, &si, f);
        }
        // The driver's job timeout is seconds; allow several.
        if (r == VK_SUCCESS) {
            r = vkWaitForFences(c.dev, 1, &f, VK_TRUE, 30ull * 1000 * 1000 * 1000);
        }
        check(r == VK_ERROR_DEVICE_LOST, "the hung dispatch ends in VK_ERROR_DEVICE_LOST: %s after %.0f ms",
              vk_result_name(r), now_ms() - t0);
        VkResult again = vkQueueSubmit(q, 0, NULL, VK_NULL_HANDLE);
        check(again == VK_ERROR_DEVICE_LOST, "a later vkQueueSubmit on the lost device -> %s", vk_result_name(again));
        vkDestroyFence(c.dev, f, NULL);
        vkFreeCommandBuffers(c.dev, c.pool, 1, &cb);
    }
    if (ready) {
        free_compute(&c, &k);
    }
    free_buffer(&c, &out);
    destroy(&c);
    note("torn down after the device loss");
    return 0;
}

// ---------------------------------------------------------------------------------------------

int main(int argc, char** argv) {
    static const struct {
        const char* name;
        int (*run)(void);
    } modes[] = {
        {"info", mode_info}, {"memory", mode_memory}, {"sync", mode_sync}, {"work", mode_work}, {"hang", mode_hang},
    };
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODE... (info memory sync work hang, or all)\n", argv[0]);
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        bool all = strcmp(argv[a], "all") == 0;
        bool found = false;
        for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
            bool is_hang = strcmp(modes[m].name, "hang") == 0;
            if ((all && !is_hang) || strcmp(argv[a], modes[m].name) == 0) {
                printf("== %s\n", modes[m].name);
                fflush(stdout);
                double t0 = now_ms();
                if (modes[m].run() != 0) {
                    check(false, "mode %s could not set up", modes[m].name);
                }
                note("mode %s: %.0f ms", modes[m].name, now_ms() - t0);
                found = true;
            }
        }
        if (!found) {
            fprintf(stderr, "unknown mode %s\n", argv[a]);
            return 2;
        }
    }
    printf("vk_client: %d checks passed, %d failed\n", passes, failures);
    if (failures == 0) {
        printf("all checks passed\n");
    }
    return failures == 0 ? 0 : 1;
}
