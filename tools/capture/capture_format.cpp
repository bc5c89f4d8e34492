// The capture file format (capture_format.h, docs/capture.md).
#include "tools/capture/capture_format.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace upanthor::capture {
namespace {

// ---- encoding ----
struct Enc {
    std::vector<std::uint8_t> b;
    void u8(std::uint8_t v) { b.push_back(v); }
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; i++)
            b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
    void u64(std::uint64_t v) {
        for (int i = 0; i < 8; i++)
            b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
    void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
    void bytes(const std::vector<std::uint8_t>& v) {
        u32(static_cast<std::uint32_t>(v.size()));
        b.insert(b.end(), v.begin(), v.end());
    }
    void raw(const void* p, std::size_t n) {
        const auto* c = static_cast<const std::uint8_t*>(p);
        b.insert(b.end(), c, c + n);
    }
};

struct Dec {
    const std::uint8_t* p;
    const std::uint8_t* end;
    bool ok = true;
    bool need(std::size_t n) {
        if (static_cast<std::size_t>(end - p) < n)
            ok = false;
        return ok;
    }
    std::uint8_t u8() { return need(1) ? *p++ : 0; }
    std::uint32_t u32() {
        if (!need(4))
            return 0;
        std::uint32_t v = 0;
        for (int i = 0; i < 4; i++)
            v |= std::uint32_t{p[i]} << (8 * i);
        p += 4;
        return v;
    }
    std::uint64_t u64() {
        if (!need(8))
            return 0;
        std::uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= std::uint64_t{p[i]} << (8 * i);
        p += 8;
        return v;
    }
    std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
    std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
    std::vector<std::uint8_t> bytes() {
        const std::uint32_t n = u32();
        if (!need(n))
            return {};
        std::vector<std::uint8_t> v(p, p + n);
        p += n;
        return v;
    }
};

void enc_call(Enc& e, const Record& r) {
    e.u64(r.enter_seq);
    e.u64(r.exit_seq);
    e.u32(r.tid);
    e.u32(static_cast<std::uint32_t>(r.task.size()));
    e.raw(r.task.data(), r.task.size());
    e.i32(r.fd);
    e.u32(r.file_id);
    e.i64(r.result);
    e.u32(r.euid);
    e.u64(r.caps);
}

void dec_call(Dec& d, Record& r) {
    r.enter_seq = d.u64();
    r.exit_seq = d.u64();
    r.tid = d.u32();
    const std::uint32_t tn = d.u32();
    if (d.need(tn)) {
        r.task.assign(reinterpret_cast<const char*>(d.p), tn);
        d.p += tn;
    }
    r.fd = d.i32();
    r.file_id = d.u32();
    r.result = d.i64();
    r.euid = d.u32();
    r.caps = d.u64();
}

std::vector<std::uint8_t> encode(const Record& r) {
    Enc e;
    enc_call(e, r);
    switch (r.type) {
    case RecType::Open:
        e.u8(static_cast<std::uint8_t>(r.kind));
        e.i32(r.flags);
        break;
    case RecType::Dup: e.i32(r.newfd); break;
    case RecType::Ioctl:
        e.u32(r.request);
        e.i64(r.mono_ns);
        e.u64(r.arg_ptr);
        e.u8(static_cast<std::uint8_t>((r.arg_readable ? 1 : 0) | (r.arg_writable ? 2 : 0)));
        e.bytes(r.arg_in);
        e.bytes(r.arg_out);
        e.u32(static_cast<std::uint32_t>(r.bufs.size()));
        for (const Buffer& b : r.bufs) {
            e.u64(b.user_ptr);
            e.u32(b.size);
            e.u8(static_cast<std::uint8_t>((b.readable ? 1 : 0) | (b.writable ? 2 : 0)));
            e.bytes(b.in);
            e.bytes(b.out);
        }
        e.u32(static_cast<std::uint32_t>(r.bo_pages.size()));
        for (const BoPage& p : r.bo_pages) {
            e.u32(p.handle);
            e.u32(p.page);
            e.u64(p.hash);
        }
        break;
    case RecType::Mmap:
        e.u64(r.offset);
        e.u64(r.len);
        e.i32(r.prot);
        e.i32(r.flags);
        e.u64(r.addr);
        break;
    case RecType::Munmap:
        e.u64(r.addr);
        e.u64(r.len);
        break;
    default: break;
    }
    return e.b;
}

bool decode(RecType t, Dec& d, Record& r) {
    r.type = t;
    dec_call(d, r);
    switch (t) {
    case RecType::Open: {
        const std::uint8_t k = d.u8();
        if (k > static_cast<std::uint8_t>(FileKind::SwSync))
            return false;
        r.kind = static_cast<FileKind>(k);
        r.flags = d.i32();
        break;
    }
    case RecType::Close: break;
    case RecType::Dup: r.newfd = d.i32(); break;
    case RecType::Ioctl: {
        r.request = d.u32();
        r.mono_ns = d.i64();
        r.arg_ptr = d.u64();
        const std::uint8_t fl = d.u8();
        r.arg_readable = fl & 1;
        r.arg_writable = fl & 2;
        r.arg_in = d.bytes();
        r.arg_out = d.bytes();
        const std::uint32_t nb = d.u32();
        for (std::uint32_t i = 0; i < nb && d.ok; i++) {
            Buffer b;
            b.user_ptr = d.u64();
            b.size = d.u32();
            const std::uint8_t bf = d.u8();
            b.readable = bf & 1;
            b.writable = bf & 2;
            b.in = d.bytes();
            b.out = d.bytes();
            if (b.readable && (b.in.size() != b.size || b.out.size() != b.size))
                return false;
            r.bufs.push_back(std::move(b));
        }
        const std::uint32_t np = d.u32();
        for (std::uint32_t i = 0; i < np && d.ok; i++) {
            BoPage p;
            p.handle = d.u32();
            p.page = d.u32();
            p.hash = d.u64();
            r.bo_pages.push_back(p);
        }
        break;
    }
    case RecType::Mmap:
        r.offset = d.u64();
        r.len = d.u64();
        r.prot = d.i32();
        r.flags = d.i32();
        r.addr = d.u64();
        break;
    case RecType::Munmap:
        r.addr = d.u64();
        r.len = d.u64();
        break;
    default: return false;
    }
    return d.ok;
}

}  // namespace

std::uint64_t page_hash(const void* data, std::size_t n) {
    // A 64-bit multiply-mix over 8-byte words (then the tail), seeded with the length.
    const auto* p = static_cast<const std::uint8_t*>(data);
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        w *= 0x87C37B91114253D5ull;
        w = (w << 31) | (w >> 33);
        h ^= w * 0x4CF5AD432745937Full;
        h = ((h << 27) | (h >> 37)) * 5 + 0x52DCE729;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

Writer::~Writer() {
    if (gz_)
        close();
}

bool Writer::open(const std::string& path, const Header& h) {
    gz_ = gzopen(path.c_str(), "wb6");
    if (!gz_)
        return false;
    Enc e;
    e.raw(kMagic, sizeof(kMagic));
    e.u32(h.version);
    e.i32(h.pid);
    e.i64(h.start_mono_ns);
    e.u32(static_cast<std::uint32_t>(h.program.size()));
    e.raw(h.program.data(), h.program.size());
    put(RecType::Header, e.b);
    return !failed_;
}

void Writer::put(RecType t, const std::vector<std::uint8_t>& payload) {
    if (!gz_)
        return;
    std::uint8_t head[5];
    head[0] = static_cast<std::uint8_t>(t);
    const auto n = static_cast<std::uint32_t>(payload.size());
    for (int i = 0; i < 4; i++)
        head[1 + i] = static_cast<std::uint8_t>(n >> (8 * i));
    auto* gz = static_cast<gzFile>(gz_);
    if (gzwrite(gz, head, sizeof(head)) != static_cast<int>(sizeof(head)))
        failed_ = true;
    if (n && gzwrite(gz, payload.data(), n) != static_cast<int>(n))
        failed_ = true;
}

void Writer::write(const Record& r) {
    put(r.type, encode(r));
}

void Writer::write_page(std::uint64_t hash, const void* data) {
    Enc e;
    e.u64(hash);
    e.raw(data, kPageSize);
    put(RecType::Page, e.b);
}

bool Writer::close() {
    if (!gz_)
        return !failed_;
    put(RecType::End, {});
    const int rc = gzclose(static_cast<gzFile>(gz_));
    gz_ = nullptr;
    return rc == Z_OK && !failed_;
}

bool read_capture(const std::string& path, Capture* out, std::string* err) {
    auto fail = [&](const std::string& why) {
        *err = path + ": " + why;
        return false;
    };
    // The whole file is read and inflated in one pass into a buffer sized from the gzip
    // trailer (the size modulo 2^32, so only a hint): growing the output chunk by chunk
    // copied and faulted in the records about twice, a tenth of a short replay's time.
    std::vector<std::uint8_t> file;
    {
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f)
            return fail(std::string("cannot open: ") + std::strerror(errno ? errno : ENOENT));
        if (std::fseek(f, 0, SEEK_END) == 0) {
            const long size = std::ftell(f);
            if (size > 0)
                file.reserve(static_cast<std::size_t>(size));
            std::rewind(f);
        }
        std::uint8_t chunk[1 << 14];
        for (std::size_t n; (n = std::fread(chunk, 1, sizeof(chunk), f)) > 0;)
            file.insert(file.end(), chunk, chunk + n);
        const bool read_error = std::ferror(f);
        std::fclose(f);
        if (read_error)
            return fail("cannot read");
    }
    std::vector<std::uint8_t> data;
    bool broken = false;
    std::string zwhy;
    if (file.size() >= 18 && file[0] == 0x1f && file[1] == 0x8b) {
        const std::size_t hint = file[file.size() - 4] | std::size_t{file[file.size() - 3]} << 8 |
                                 std::size_t{file[file.size() - 2]} << 16 | std::size_t{file[file.size() - 1]} << 24;
        // A cut or corrupt file's "size" is any number: trusted up to 64 times the file.
        data.resize(std::max<std::size_t>(std::min<std::size_t>(hint, 64 * file.size()), 1 << 16));
        z_stream zs{};
        if (inflateInit2(&zs, 15 + 16) != Z_OK)
            return fail("cannot inflate: out of memory");
        zs.next_in = file.data();
        zs.avail_in = static_cast<uInt>(file.size());
        std::size_t out = 0;
        for (;;) {
            if (out == data.size())
                data.resize(data.size() * 2);
            zs.next_out = data.data() + out;
            zs.avail_out = static_cast<uInt>(std::min<std::size_t>(data.size() - out, 1u << 30));
            const std::size_t room = zs.avail_out;
            const int rc = inflate(&zs, Z_NO_FLUSH);
            out += room - zs.avail_out;
            if (rc == Z_STREAM_END) {
                // Another gzip member may follow, as gzread reads them; anything else after a
                // member is ignored, as gzread ignores it.
                if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b)
                    break;
                inflateReset(&zs);
                continue;
            }
            if (rc == Z_OK)
                continue;
            if (rc == Z_BUF_ERROR && zs.avail_out != 0) {  // input ended inside the stream
                zwhy = "unexpected end of file";
            } else if (rc != Z_BUF_ERROR) {
                zwhy = zs.msg ? zs.msg : "inflate error " + std::to_string(rc);
            } else {
                continue;  // the output was full
            }
            broken = true;
            break;
        }
        inflateEnd(&zs);
        data.resize(out);
    } else {
        data = std::move(file);  // not gzip: read as it is, as gzread does
    }
    if (data.size() < 5 + sizeof(kMagic) || data[0] != static_cast<std::uint8_t>(RecType::Header) ||
        std::memcmp(data.data() + 5, kMagic, sizeof(kMagic)) != 0)
        return fail("not an upanthor capture (no capture header)");
    Dec d{data.data(), data.data() + data.size()};
    std::uint64_t line = 0;
    bool ended = false;
    while (d.p < d.end) {
        line++;
        const std::uint8_t t = d.u8();
        const std::uint32_t n = d.u32();
        if (!d.need(n))
            return fail("truncated: record " + std::to_string(line) + " is cut short");
        Dec rd{d.p, d.p + n};
        d.p += n;
        const auto type = static_cast<RecType>(t);
        if (line == 1) {
            rd.p += sizeof(kMagic);
            out->header.version = rd.u32();
            if (out->header.version != kFormatVersion)
                return fail("capture format version " + std::to_string(out->header.version) +
                            ", this program reads version " + std::to_string(kFormatVersion));
            out->header.pid = rd.i32();
            out->header.start_mono_ns = rd.i64();
            const std::uint32_t pn = rd.u32();
            if (!rd.need(pn))
                return fail("malformed header");
            out->header.program.assign(reinterpret_cast<const char*>(rd.p), pn);
            continue;
        }
        if (ended)
            return fail("record " + std::to_string(line) + " after the end record");
        if (type == RecType::End) {
            ended = true;
            continue;
        }
        if (type == RecType::Page) {
            const std::uint64_t h = rd.u64();
            if (!rd.need(kPageSize) || static_cast<std::size_t>(rd.end - rd.p) != kPageSize)
                return fail("malformed page record " + std::to_string(line));
            out->pages[h] = rd.p;
            continue;
        }
        if (type == RecType::Header || t > static_cast<std::uint8_t>(RecType::End))
            continue;  // a later version's record type: skipped (the version check guards meaning)
        Record r;
        r.line = line;
        if (!decode(type, rd, r))
            return fail("malformed " + std::string(rec_type_name(type)) + " record " + std::to_string(line));
        out->records.push_back(std::move(r));
    }
    if (broken)
        return fail("truncated or corrupt compressed stream (" + zwhy + ") after record " + std::to_string(line));
    if (!ended)
        return fail("truncated: no end record after record " + std::to_string(line) +
                    " (the capturing process did not exit normally?)");
    for (const Record& r : out->records)
        for (const BoPage& p : r.bo_pages)
            if (!out->pages.count(p.hash))
                return fail("record " + std::to_string(r.line) + " names a page whose contents are not in the file");
    out->storage = std::move(data);  // the pages' bytes; the move keeps their addresses
    return true;
}

const char* rec_type_name(RecType t) {
    switch (t) {
    case RecType::Header: return "header";
    case RecType::Open: return "open";
    case RecType::Close: return "close";
    case RecType::Dup: return "dup";
    case RecType::Ioctl: return "ioctl";
    case RecType::Mmap: return "mmap";
    case RecType::Munmap: return "munmap";
    case RecType::Page: return "page";
    case RecType::End: return "end";
    }
    return "?";
}

}  // namespace upanthor::capture
