"""Reads and writes upanthor capture files (docs/capture.md, format version 1) for the replay tests.

A capture is a gzip stream of records: type (u8), payload length (u32 LE), payload. This module
keeps every record as (type, payload bytes) and decodes the parts the tests edit.
"""
import gzip
import struct

HEADER, OPEN, CLOSE, DUP, IOCTL, MMAP, MUNMAP, PAGE, END = range(1, 10)


def call_head(payload):
    """(enter, exit, tid, fd, file_id, result, euid, caps) and the offset after the call head."""
    enter, exit_, tid, n = struct.unpack_from("<QQII", payload, 0)
    off = 24 + n
    fd, file_id, result, euid, caps = struct.unpack_from("<iIqIQ", payload, off)
    return (enter, exit_, tid, fd, file_id, result, euid, caps), off + 4 + 4 + 8 + 4 + 8


def read(path):
    data = gzip.open(path, "rb").read()
    recs, off = [], 0
    while off < len(data):
        t, n = struct.unpack_from("<BI", data, off)
        recs.append([t, bytearray(data[off + 5:off + 5 + n])])
        off += 5 + n
    return recs


def write(path, recs, compress=True):
    raw = b"".join(struct.pack("<BI", t, len(p)) + bytes(p) for t, p in recs)
    with (gzip.open(path, "wb") if compress else open(path, "wb")) as f:
        f.write(raw)


def line_of(recs, index):
    """The record's line as upanthor reports it (1-based position in the file)."""
    return index + 1


def ioctl_fields(payload):
    """(request, arg_in offset, arg_in, arg_out offset, arg_out) of an ioctl record's payload."""
    off = call_head(payload)[1]
    request, _mono, _ptr, _flags = struct.unpack_from("<IqQB", payload, off)
    off += 4 + 8 + 8 + 1
    (n_in,) = struct.unpack_from("<I", payload, off)
    in_off = off + 4
    off = in_off + n_in
    (n_out,) = struct.unpack_from("<I", payload, off)
    out_off = off + 4
    return request, in_off, bytes(payload[in_off:in_off + n_in]), out_off, bytes(payload[out_off:out_off + n_out])


def page_list_offset(payload):
    """The offset of an ioctl record's page list (npages:u32 then {handle, page, hash})."""
    _req, _io, _ai, out_off, arg_out = ioctl_fields(payload)
    off = out_off + len(arg_out)
    (nbufs,) = struct.unpack_from("<I", payload, off)
    off += 4
    for _ in range(nbufs):
        off += 8 + 4 + 1
        for _ in range(2):
            (n,) = struct.unpack_from("<I", payload, off)
            off += 4 + n
    return off


def drop_pages(payload):
    """The ioctl record with an empty page list; returns how many pages it listed."""
    off = page_list_offset(payload)
    (npages,) = struct.unpack_from("<I", payload, off)
    del payload[off:]
    payload += struct.pack("<I", 0)
    return npages
