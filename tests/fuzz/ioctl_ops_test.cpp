// fuzz_ioctl's op values are frozen (docs/fuzzing.md, "fuzz_ioctl's ops"): the saved corpus and
// crash files are byte strings whose op bytes mean a call only through them, so an op must never
// change its value, its meaning or whether it is a teardown op. These tests pin all three, and
// pin what every saved input decodes to: the (op value, name) stream of each input under
// fuzz/corpus/fuzz_ioctl/ and fuzz/crashes/fuzz_ioctl/, as a digest computed on the decoder
// before it became a table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fuzz/ioctl_ops.h"
#include "fuzz/ioctl_program.h"
#include "fuzz/panthor_world.h"
#include "fuzz/world_history.h"

namespace {

namespace fs = std::filesystem;
using upanthor_fuzz::PanthorWorld;

// Every op value with its name and whether it is a teardown op, written out: the reference the
// decoder is checked against, never generated from it.
struct PinnedOp {
    uint8_t value;
    const char* name;
    bool teardown;
};
constexpr PinnedOp kPinnedOps[] = {
    {0, "VERSION", false},
    {1, "GET_CAP", false},
    {2, "GEM_CLOSE", true},
    {3, "SYNCOBJ_CREATE", false},
    {4, "SYNCOBJ_CREATE", false},
    {5, "SYNCOBJ_DESTROY", true},
    {6, "SYNCOBJ_HANDLE_TO_FD", false},
    {7, "SYNCOBJ_FD_TO_HANDLE", false},
    {8, "SYNCOBJ_WAIT", true},
    {9, "SYNCOBJ_RESET", false},
    {10, "SYNCOBJ_SIGNAL", false},
    {11, "SYNCOBJ_TIMELINE_WAIT", true},
    {12, "SYNCOBJ_QUERY", false},
    {13, "SYNCOBJ_TIMELINE_SIGNAL", false},
    {14, "SYNCOBJ_TRANSFER", false},
    {15, "raw_ioctl", false},
    {16, "DEV_QUERY", false},
    {17, "VM_CREATE", false},
    {18, "VM_CREATE", false},
    {19, "VM_DESTROY", true},
    {20, "VM_BIND", false},
    {21, "VM_BIND", false},
    {22, "VM_BIND", false},
    {23, "VM_GET_STATE", false},
    {24, "BO_CREATE", false},
    {25, "BO_CREATE", false},
    {26, "BO_MMAP_OFFSET", false},
    {27, "GROUP_CREATE", false},
    {28, "GROUP_CREATE", false},
    {29, "GROUP_DESTROY", true},
    {30, "GROUP_SUBMIT", false},
    {31, "GROUP_SUBMIT", false},
    {32, "GROUP_SUBMIT", false},
    {33, "GROUP_GET_STATE", false},
    {34, "TILER_HEAP_CREATE", false},
    {35, "TILER_HEAP_DESTROY|BO_SET_LABEL|SET_USER_MMIO_OFFSET", true},
    {36, "mmap|munmap", true},
    {37, "cpu_write", false},
    {38, "close|reopen", true},
    {39, "advance", true},
    {40, "PRIME_HANDLE_TO_FD", false},
    {41, "PRIME_FD_TO_HANDLE", false},
    {42, "SYNCOBJ_EVENTFD", false},
    {43, "SYNC_IOC", false},
    {44, "DMA_BUF_IOCTL_SYNC|dma_buf_mmap", false},
    {45, "close_fd", true},
    {46, "fail_allocations", false},
    {47, "gpu_fault", false},
};

// The old switch's hand-kept list of teardown ops (IoctlProgram::call before the table).
constexpr uint8_t kOldTeardownList[] = {2, 5, 8, 11, 19, 29, 35, 36, 38, 39, 45};

// The decoder's name of an op value: the table's.
const char* op_name(uint8_t v) {
    return v < upanthor_fuzz::kIoctlOpCount ? upanthor_fuzz::ioctl_op_desc(static_cast<upanthor_fuzz::IoctlOp>(v)).name
                                            : "?";
}

TEST(IoctlOps, TableHasEveryValueOnceInOrderWithAHandler) {
    const auto ops = upanthor_fuzz::ioctl_ops();
    ASSERT_EQ(ops.size(), upanthor_fuzz::kIoctlOpCount);
    std::vector<int> seen(256, 0);
    for (size_t i = 0; i < ops.size(); ++i) {
        const auto v = static_cast<uint8_t>(ops[i].op);
        EXPECT_EQ(v, i) << ops[i].name;
        EXPECT_EQ(++seen[v], 1) << "op value " << int{v} << " twice";
        EXPECT_NE(ops[i].handler, nullptr) << ops[i].name;
        EXPECT_STRNE(upanthor_fuzz::ioctl_op_family_name(ops[i].family), "?") << ops[i].name;
    }
}

TEST(IoctlOps, ValuesNamesAndTeardownFlagsAreThePinnedOnes) {
    ASSERT_EQ(std::size(kPinnedOps), upanthor_fuzz::kIoctlOpCount);
    for (const PinnedOp& p : kPinnedOps) {
        const auto& d = upanthor_fuzz::ioctl_op_desc(static_cast<upanthor_fuzz::IoctlOp>(p.value));
        EXPECT_EQ(static_cast<uint8_t>(d.op), p.value);
        EXPECT_STREQ(d.name, p.name) << "op value " << int{p.value};
        EXPECT_EQ(d.teardown, p.teardown) << "op value " << int{p.value} << " " << p.name;
    }
}

TEST(IoctlOps, TeardownSetIsTheOldHandKeptList) {
    std::vector<uint8_t> teardown;
    for (const auto& d : upanthor_fuzz::ioctl_ops())
        if (d.teardown)
            teardown.push_back(static_cast<uint8_t>(d.op));
    EXPECT_EQ(teardown, std::vector<uint8_t>(std::begin(kOldTeardownList), std::end(kOldTeardownList)));
}

// Every op byte selects the op it did in the switch: byte % 40 below 240, 40 + (byte - 240) % 8
// from 240 (written out here once more, as the reference).
TEST(IoctlOps, EveryByteSelectsItsOldOp) {
    for (unsigned b = 0; b < 256; ++b) {
        const unsigned old = b >= 240 ? 40 + (b - 240) % 8 : b % 40;
        EXPECT_EQ(static_cast<unsigned>(upanthor_fuzz::ioctl_op_of_byte(static_cast<uint8_t>(b))), old) << "byte " << b;
    }
}

// What every saved input decoded to before the op table (commit "fuzz_ioctl: pin the op stream
// of the saved inputs"): FNV-1a 64 over (op value, name) of each call, in order. An input added
// later needs its line; the failing test prints the lines it computed.
struct PinnedStream {
    const char* input;  // relative to fuzz/
    size_t calls;
    uint64_t digest;
};
constexpr PinnedStream kPinnedStreams[] = {
    {"corpus/fuzz_ioctl/00ca71c3911e4986642fe3b35178651dac70f6da", 39, 0xa81d1b45d038d52full},
    {"corpus/fuzz_ioctl/00df418b79c7938111ec3b9bab781e4d0d6a5f45", 11, 0xa9f7f0272b34bfe6ull},
    {"corpus/fuzz_ioctl/01cfa2b694ef4a45dbcb7264b5818ce05d676720", 61, 0x1045d95d8838bb0dull},
    {"corpus/fuzz_ioctl/033bb4e703b6b535c8e43ab40b8a79397014697e", 32, 0x90d05b1e3c80a5abull},
    {"corpus/fuzz_ioctl/036c5500284673aa95070d3a0b4de72249e30a88", 33, 0x622007b2a1e6afd0ull},
    {"corpus/fuzz_ioctl/0489375c3a8696ce90adde4d4100f668db41bbf0", 19, 0xe308a3cf25ce7bb8ull},
    {"corpus/fuzz_ioctl/04c7180970b6a1558bf535558ead4487852316b9", 45, 0x2b87eb59896ff992ull},
    {"corpus/fuzz_ioctl/0757e4ca33a52ea38470a8fb56b8559c7332b1fe", 57, 0x7be67e0ad955c1ffull},
    {"corpus/fuzz_ioctl/07d8312a352ff94cc796c31e3970806c73c08fdd", 64, 0x74a2a6ca8e12af0eull},
    {"corpus/fuzz_ioctl/0c38cb5fdf20521d212bfcdfab77e240e7d9f5e1", 45, 0xf69451af99414fd8ull},
    {"corpus/fuzz_ioctl/123ec394580f7dc7d2a4a12067aeb75c30a20b5c", 63, 0x54261e6c41b4ff65ull},
    {"corpus/fuzz_ioctl/15403cb15f3c83fd61b0a93515c0b978880fe1cb", 36, 0x120c1e89e04f0ba5ull},
    {"corpus/fuzz_ioctl/2069932d53166a9e385ffcf511ca30fb73369f94", 39, 0x347c9d4aad784d95ull},
    {"corpus/fuzz_ioctl/20b286098e8b0252ee952c865133d501efa777c8", 63, 0xd4a85f1d9319020aull},
    {"corpus/fuzz_ioctl/2276452b6e46f1bbc7da3617cfc88f3ea5d0e5a5", 50, 0x148aad81a4fd80c5ull},
    {"corpus/fuzz_ioctl/23f15e41feda5471e76f38f9d30a5d61399a39be", 22, 0x4f8fa28f658d1700ull},
    {"corpus/fuzz_ioctl/2d64859a0ffb18889138773a8a69db1104522c92", 5, 0xc9d87d3046bc900full},
    {"corpus/fuzz_ioctl/2e537ff290fd21ca44a73bbcb7c503739942609f", 11, 0xf50f8577889866fdull},
    {"corpus/fuzz_ioctl/314afe97b5a910db678be9f3f6062a461231db02", 50, 0xf979c239d3a76b78ull},
    {"corpus/fuzz_ioctl/337f81dcf8bda56eba02b8aec0151479fbf9eaf1", 25, 0x27a9c320cdb85cfdull},
    {"corpus/fuzz_ioctl/3529405e27c75151acb6e3f3b32e93dc7e9e05f7", 13, 0xb9d16a46c359cf9aull},
    {"corpus/fuzz_ioctl/3a15493b97d9aad64c2c79c4c1de30105be8a198", 32, 0x8137f4249e0f9e69ull},
    {"corpus/fuzz_ioctl/3e0a227462b3833852a2be5cb6e96ff3dca345cb", 11, 0x319e42678826e92full},
    {"corpus/fuzz_ioctl/40f790c79c7b3e82881e2253c710b89d0c8305a6", 50, 0xf436b7b66a47c676ull},
    {"corpus/fuzz_ioctl/55354541d0bf23f806dab498c6ca25838d83847d", 40, 0x9ce51cef207f17f9ull},
    {"corpus/fuzz_ioctl/574beccfcf5b666634fc80ca02573435b417c9a5", 61, 0x97301036b38ad6dfull},
    {"corpus/fuzz_ioctl/59772c8a4f0c8e63aa41f880799c9860e369b723", 7, 0x66fe285004081583ull},
    {"corpus/fuzz_ioctl/5b4cbb006237bb222877b26e1e9efb6c25f51a40", 61, 0xab1eecc32bf82bbcull},
    {"corpus/fuzz_ioctl/650b0d8cc51b60c3c45e0ea8e31e295cf30f45de", 31, 0x1358238a106d5579ull},
    {"corpus/fuzz_ioctl/65a3b794eeca11121280a03e1f1be58cbb78b0e6", 64, 0x3dcf76e6d34a666aull},
    {"corpus/fuzz_ioctl/680a01a72a37c3b9be817a9a3d74565ac7fbbaa4", 60, 0x6a9fc35c8d135ecbull},
    {"corpus/fuzz_ioctl/6a441d6b0ea05c8e0fd358c536095cfcde0fb1d2", 22, 0x2bbef8a8ddcfcb9aull},
    {"corpus/fuzz_ioctl/6bdc5b13c5ea9c1ce766d77aa02f6f2c49cf422e", 11, 0x009e22ce83eb672dull},
    {"corpus/fuzz_ioctl/6cfc12be5cf9297caffa8675b85bc08d7605763c", 11, 0xa67cbecd6e840a43ull},
    {"corpus/fuzz_ioctl/6f13b4ab7b85e8571e96cc03e39db996814721e8", 44, 0xe615b0f568710931ull},
    {"corpus/fuzz_ioctl/71d20e85fbd7882683aad102ebb2be4cf6642505", 14, 0x414edcd460831ac7ull},
    {"corpus/fuzz_ioctl/77de57dc99b1ebe137f410f523f8748b18e481f9", 44, 0x344085a1419a7e45ull},
    {"corpus/fuzz_ioctl/7849b846beb9bc3b43f2fdb0fb83ba65f1a2a798", 32, 0x813a17e47634965cull},
    {"corpus/fuzz_ioctl/825181c00bef7cb781d6ce9ff840759771b01686", 10, 0xe70fdb1951ba0bdfull},
    {"corpus/fuzz_ioctl/83871de40af9eb14d43ab67bc7d5a089d979171d", 64, 0xe08703594e1713b8ull},
    {"corpus/fuzz_ioctl/83e6078fff49107d9843f4c5cd8ff59db6842483", 61, 0x720aa97f76c188e6ull},
    {"corpus/fuzz_ioctl/85db3d639fc983365a1222539e309b1a698fd9a6", 9, 0x9f30b11e304ea6f1ull},
    {"corpus/fuzz_ioctl/88f5c7ca9f5fa02ba0d5b0193b0be1070522ce48", 12, 0xf7a3a1dcbf646ccaull},
    {"corpus/fuzz_ioctl/8a55cfdd031c28f2a8200aa34d36778b78bcf094", 61, 0xbdbcff111982d1cdull},
    {"corpus/fuzz_ioctl/8c8136fe96480cff471eaaaf763676a9a5b2745f", 11, 0x1a7e2c8f0bba7207ull},
    {"corpus/fuzz_ioctl/8e4145d8a13f93d4b6f7985116653d366916a712", 31, 0xbdaf7a3ad67f4122ull},
    {"corpus/fuzz_ioctl/90e5132dbf7e17090e487d8a0583486d12163b50", 39, 0xf60d83049fa4a7c0ull},
    {"corpus/fuzz_ioctl/92bbcc2ee169b0cc65a93a622a1e7e2f42dfdf8f", 38, 0xa2725bba89a19baeull},
    {"corpus/fuzz_ioctl/9553e4785c3549863866bb2d92dd637452107c08", 9, 0x8737735e19e24b12ull},
    {"corpus/fuzz_ioctl/9f2bf3586d199eb71eac404dfa694c83e5c2be98", 54, 0x682c66768ac98d1bull},
    {"corpus/fuzz_ioctl/abe895f34f574e4785bfbd215d4fe13002bbc1dc", 45, 0x1533ec1e6a73db1eull},
    {"corpus/fuzz_ioctl/ac1714b700ef312f9e16b47b80ec2d917cc62c25", 7, 0x3e233c2859106913ull},
    {"corpus/fuzz_ioctl/b277cc4876b75c2bcb1446a2bc57f54ab8974544", 45, 0xf6bb057e8bcd7d41ull},
    {"corpus/fuzz_ioctl/b364a605e0ab0c2869482da59978572dfb329500", 55, 0x6ec2fac6fb6c5c7eull},
    {"corpus/fuzz_ioctl/b3c3cfb6f08d321fd050c708227d190076da4535", 44, 0x7c79de37e5f9a0b3ull},
    {"corpus/fuzz_ioctl/bdd270893f20f384a41d42fb9c5b15ce5a5d9e39", 54, 0xa00591310a4ff5eaull},
    {"corpus/fuzz_ioctl/c4618ff5d97ce0fd7e623d80105cb5e8fba1acfd", 61, 0x66a004836dda650full},
    {"corpus/fuzz_ioctl/c5790ef08ccbec46104816f29dbb2c80a621660c", 19, 0x139fc13a4aa20db6ull},
    {"corpus/fuzz_ioctl/c71e4353294341e21107d757963077b94ee9151d", 16, 0xfaf27d420c930e4bull},
    {"corpus/fuzz_ioctl/cf43c464836daac9dfb7cf35d1730ccbf4cfd762", 42, 0xe18ba02a8d09d8c2ull},
    {"corpus/fuzz_ioctl/d43af047aee91c00c903c6afab0b5c17f2b6194d", 27, 0x9b4463a45361d584ull},
    {"corpus/fuzz_ioctl/d8fb7d6d2fe27d9e5770c88cbfca60e3a5d774d7", 5, 0x4e2e13770d38b6d3ull},
    {"corpus/fuzz_ioctl/d9f067c45101da9b9feb44aa6320089bb4a6f2c0", 44, 0x1641bcd49cc30458ull},
    {"corpus/fuzz_ioctl/dfd651f1621855ee6b70035ba0bc37f2dcbda576", 19, 0xe30510552bdd7334ull},
    {"corpus/fuzz_ioctl/e1a5aeb622b95e79e2ff320e7c7b5c89f26213cd", 64, 0xd7ab6958711649c5ull},
    {"corpus/fuzz_ioctl/e3985b9e02013f539331570b27ca89382cbd04fa", 61, 0x1045d95d8838bb0dull},
    {"corpus/fuzz_ioctl/e6ad00e47fe2790d82c4744aa35ce00cdb3de6a0", 54, 0xa2c686a36ccdda45ull},
    {"corpus/fuzz_ioctl/e6c6a9c80fcef7e68006d17ededb2bfe1e822c6c", 19, 0x0f3ee198d2f80d3aull},
    {"corpus/fuzz_ioctl/ebc894c014f9656b3eab312519c99c2d42b0e38c", 11, 0xb7b86e111977e025ull},
    {"corpus/fuzz_ioctl/f2ff454429cde9e64f2134d9fd5016c941db7533", 34, 0x9d670db17ec1c493ull},
    {"corpus/fuzz_ioctl/fd7036fa32ab67891177e4e291609085ba671cfd", 49, 0x0704c8ff242edfd2ull},
    {"corpus/fuzz_ioctl/seed-fd-ops-prime-dmabuf-syncfile", 11, 0xdf864b0d4fcdb1f5ull},
    {"crashes/fuzz_ioctl/crash-09ef1cdf4af09e218a52864b0387c24f3d32882a", 31, 0xa2b1412d99839179ull},
    {"crashes/fuzz_ioctl/crash-1838ca95f96fca7494feea3c426308cfea6ff6ef", 46, 0x35410d57a90642a6ull},
    {"crashes/fuzz_ioctl/crash-858ac03d12e1e0ebd52577ed3e956bc0b3100d32", 7, 0x5388b0fc606f0890ull},
    {"crashes/fuzz_ioctl/crash-8bdcb43809c733e85af08ac16cb4196ef9bd8b75", 28, 0x006857f632775c87ull},
    {"crashes/fuzz_ioctl/crash-9909b6c87a76f03fc1188e1dd093a8b262536b21", 23, 0xf438cfb30802074dull},
    {"crashes/fuzz_ioctl/oom-72cdee520742c5cc20b464e429a0cdab31d789a2", 4, 0x80981222fc614613ull},
    {"crashes/fuzz_ioctl/oom-ad5c9b73f9d0b26f3e7c23224a331e79535ab863", 44, 0x4ad9f3c357587005ull},
    {"crashes/fuzz_ioctl/w2_crash-64797c7930360b0fce8ba54b001279030e9d1694", 19, 0x6b29bde0ac2650c1ull},
};

uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        h ^= static_cast<const uint8_t*>(p)[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t digest_of(const std::vector<uint8_t>& ops) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint8_t v : ops) {
        const std::string name = op_name(v);
        h = fnv1a(h, &v, 1);
        h = fnv1a(h, name.c_str(), name.size() + 1);
    }
    return h;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The saved inputs of fuzz_ioctl, as "corpus/fuzz_ioctl/<file>" and "crashes/fuzz_ioctl/<file>".
std::vector<std::string> saved_inputs() {
    std::vector<std::string> out;
    for (const char* kind : {"corpus", "crashes"}) {
        const fs::path dir = fs::path(UPANTHOR_SOURCE_DIR) / "fuzz" / kind / "fuzz_ioctl";
        if (!fs::is_directory(dir))
            continue;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file())
                out.push_back(std::string(kind) + "/fuzz_ioctl/" + e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The op stream of one saved input, each on a freshly probed device (as `fuzz_ioctl <file>`
// replays it), a history input by input.
std::vector<uint8_t> op_stream_of(const std::string& input) {
    const std::vector<uint8_t> data = read_bytes(fs::path(UPANTHOR_SOURCE_DIR) / "fuzz" / input);
    PanthorWorld world(PanthorWorld::Kind::Driver);
    EXPECT_EQ(world.probe_result(), 0);
    std::vector<uint8_t> ops;
    upanthor_fuzz::IoctlProgramOptions opts;
    opts.ops = &ops;
    if (auto history = upanthor_fuzz::parse_world_history(data.data(), data.size()))
        EXPECT_EQ(upanthor_fuzz::run_ioctl_history(world, *history, opts), "") << input;
    else
        EXPECT_EQ(upanthor_fuzz::run_ioctl_program(world, data.data(), data.size(), opts), "") << input;
    EXPECT_EQ(world.finish(), "") << input;
    return ops;
}

TEST(IoctlOps, SavedInputsDecodeToThePinnedOpStreams) {
    std::map<std::string, const PinnedStream*> pinned;
    for (const PinnedStream& p : kPinnedStreams)
        pinned[p.input] = &p;
    const std::vector<std::string> inputs = saved_inputs();
    ASSERT_FALSE(inputs.empty());
    std::string lines;  // what this build computes, in kPinnedStreams' format
    bool all_match = true;
    for (const std::string& input : inputs) {
        const std::vector<uint8_t> ops = op_stream_of(input);
        const uint64_t d = digest_of(ops);
        char line[200];
        std::snprintf(line, sizeof line, "    {\"%s\", %zu, 0x%016" PRIx64 "ull},\n", input.c_str(), ops.size(), d);
        lines += line;
        auto it = pinned.find(input);
        const bool match = it != pinned.end() && it->second->calls == ops.size() && it->second->digest == d;
        all_match &= match;
        if (match)
            continue;
        std::string stream;
        for (uint8_t v : ops)
            stream += std::to_string(v) + ":" + op_name(v) + " ";
        ADD_FAILURE() << input << (it == pinned.end() ? ": not pinned" : ": decodes to another op stream") << "\n  "
                      << stream;
    }
    EXPECT_TRUE(all_match) << "computed:\n" << lines;
    EXPECT_EQ(pinned.size(), inputs.size()) << "a pinned input is gone from fuzz/";
}

}  // namespace
