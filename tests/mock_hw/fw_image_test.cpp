// The firmware image: writer/reader round trip, panthor's validation rules, the default image.
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

using FwImageTest = MockHwTest;

void put32(std::vector<u8>& b, size_t off, u32 v) {
    std::memcpy(b.data() + off, &v, 4);
}
u32 get32(const std::vector<u8>& b, size_t off) {
    u32 v;
    std::memcpy(&v, b.data() + off, 4);
    return v;
}
// File offset of the n-th entry header.
size_t entry_off(const std::vector<u8>& b, int n) {
    size_t off = 20;
    for (int i = 0; i < n; i++)
        off += (get32(b, off) >> 8) & 0xFF;
    return off;
}

TEST_F(FwImageTest, DefaultImageRoundTrips) {
    FwImage img = default_fw_image();
    img.others.push_back({CSF_FW_BINARY_ENTRY_TYPE_TRACE_BUFFER, false, {1, 2, 3, 4}});
    std::vector<u8> bytes = write_fw_image(img);
    EXPECT_EQ(get32(bytes, 0), CSF_FW_BINARY_HEADER_MAGIC);
    FwImage back;
    ASSERT_EQ(parse_fw_image(bytes, &back), 0);
    EXPECT_EQ(back.minor, img.minor);
    EXPECT_EQ(back.version_hash, img.version_hash);
    ASSERT_EQ(back.sections.size(), img.sections.size());
    for (size_t i = 0; i < img.sections.size(); i++) {
        EXPECT_EQ(back.sections[i].name, img.sections[i].name);
        EXPECT_EQ(back.sections[i].flags, img.sections[i].flags);
        EXPECT_EQ(back.sections[i].va_start, img.sections[i].va_start);
        EXPECT_EQ(back.sections[i].va_end, img.sections[i].va_end);
        EXPECT_EQ(back.sections[i].data, img.sections[i].data);
    }
    EXPECT_EQ(back.git_sha, img.git_sha);
    ASSERT_EQ(back.others.size(), 1u);
    EXPECT_EQ(back.others[0].payload, (std::vector<u8>{1, 2, 3, 4}));
    // Writing the parsed image gives the same bytes.
    EXPECT_EQ(write_fw_image(back), bytes);
}

TEST_F(FwImageTest, DefaultImageHasWhatTheMcuExpects) {
    FwImage img = default_fw_image();
    const FwSection* shared = img.find(CSF_MCU_SHARED_REGION_START);
    ASSERT_NE(shared, nullptr);
    EXPECT_TRUE(shared->flags & CSF_FW_BINARY_IFACE_ENTRY_SHARED);
    EXPECT_TRUE(shared->flags & CSF_FW_BINARY_IFACE_ENTRY_WR);
    EXPECT_GE(shared->va_end - shared->va_start, McuLayout{}.required_size());
    const FwSection* code = img.find(kMockFwCodeVa);
    ASSERT_NE(code, nullptr);
    EXPECT_TRUE(code->flags & CSF_FW_BINARY_IFACE_ENTRY_EX);
    MockFwHeader h;
    std::memcpy(&h, code->data.data(), sizeof(h));
    EXPECT_EQ(h.magic, kMockFwMagic);
    // More groups need a bigger shared section.
    McuConfig big;
    big.group_num = 31;
    const FwImage img31 = default_fw_image(big);
    const FwSection* s31 = img31.find(CSF_MCU_SHARED_REGION_START);
    EXPECT_GE(s31->va_end - s31->va_start, (McuLayout{31, 8}.required_size()));
}

struct Corruption {
    const char* name;
    void (*apply)(std::vector<u8>& b);
};

class FwImageReject : public MockHwTest, public ::testing::WithParamInterface<Corruption> {};

TEST_P(FwImageReject, MalformedImageIsEinval) {
    std::vector<u8> b = write_fw_image(default_fw_image());
    GetParam().apply(b);
    FwImage out;
    EXPECT_EQ(parse_fw_image(b, &out), -EINVAL);
}

// Entry 0 is .text (IFACE), its payload: flags @+4, va.start @+8, va.end @+12, data @+16/+20.
INSTANTIATE_TEST_SUITE_P(
    Cases, FwImageReject,
    ::testing::Values(
        Corruption{"BadMagic", [](std::vector<u8>& b) { put32(b, 0, 0xC3F13A6F); }},
        Corruption{"MajorTooNew", [](std::vector<u8>& b) { b[5] = 1; }},
        Corruption{"SizeBeyondFile", [](std::vector<u8>& b) { put32(b, 16, static_cast<u32>(b.size() + 4)); }},
        Corruption{"Truncated", [](std::vector<u8>& b) { b.resize(12); }},
        Corruption{"EntrySizeNotMultipleOf4",
                   [](std::vector<u8>& b) { b[entry_off(b, 0) + 1] = static_cast<u8>(b[entry_off(b, 0) + 1] + 1); }},
        Corruption{"EntrySizeZero", [](std::vector<u8>& b) { b[entry_off(b, 0) + 1] = 0; }},
        Corruption{"UnknownMandatoryEntry", [](std::vector<u8>& b) { b[entry_off(b, 1)] = 0x17; }},
        Corruption{"UnsupportedSectionFlag",
                   [](std::vector<u8>& b) { put32(b, entry_off(b, 0) + 4, get32(b, entry_off(b, 0) + 4) | (1u << 7)); }},
        Corruption{"VaEndBeforeStart", [](std::vector<u8>& b) { put32(b, entry_off(b, 2) + 12, 0x1000); }},
        Corruption{"DataEndBeforeStart",
                   [](std::vector<u8>& b) { put32(b, entry_off(b, 0) + 20, get32(b, entry_off(b, 0) + 16) - 4); }},
        Corruption{"DataBeyondFile", [](std::vector<u8>& b) { put32(b, entry_off(b, 0) + 20, static_cast<u32>(b.size() + 4)); }},
        Corruption{"VaNotPageAligned", [](std::vector<u8>& b) { put32(b, entry_off(b, 0) + 12, 0x10010); }},
        Corruption{"NoSharedSection", [](std::vector<u8>& b) { put32(b, entry_off(b, 2) + 8, 0x05000000); put32(b, entry_off(b, 2) + 12, 0x05010000); }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(FwImageTest, UnknownOptionalEntryIsSkippedAndBadBuildInfoIsNotFatal) {
    FwImage img = default_fw_image();
    img.others.push_back({0x17, true, {9, 9, 9, 9}});
    std::vector<u8> b = write_fw_image(img);
    FwImage out;
    ASSERT_EQ(parse_fw_image(b, &out), 0);
    EXPECT_EQ(out.git_sha, img.git_sha);
    // Break the build-info tag: the image still loads, without a SHA.
    const size_t meta = get32(b, entry_off(b, 3) + 4);
    b[meta] = 'X';
    ASSERT_EQ(parse_fw_image(b, &out), 0);
    EXPECT_FALSE(out.git_sha.has_value());
}

TEST_F(FwImageTest, ProtectedSectionsAreIgnored) {
    FwImage img = default_fw_image();
    FwSection prot;
    prot.name = ".prot";
    prot.flags = CSF_FW_BINARY_IFACE_ENTRY_RD | CSF_FW_BINARY_IFACE_ENTRY_PROT;
    prot.va_start = 0x200000;
    prot.va_end = 0x201000;
    img.sections.push_back(prot);
    FwImage out;
    ASSERT_EQ(parse_fw_image(write_fw_image(img), &out), 0);
    EXPECT_EQ(out.sections.size(), 3u);
}

}  // namespace
}  // namespace mock_hw::testing
