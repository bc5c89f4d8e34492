// UPANTHOR_CAPTURE=FILE: the preload library records the session (docs/capture.md): every open,
// close and dup of the node and sw_sync descriptors, every ioctl on a descriptor of the library
// with its argument and the user buffers behind its pointers, mmaps and munmaps of those
// descriptors, and at each GROUP_SUBMIT and VM_BIND the file's BO pages that changed since the
// last record. In-process mode only: with UPANTHOR_SERVER set, nothing is recorded and a line on
// stderr says so. interpose.cpp calls the hooks; each is a no-op unless capturing.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace upanthor::preload {

// After an open of a node (minor 0 / 128) or of sw_sync (minor -1): the descriptor or -errno.
void capture_open(int fd_or_err, int minor, int flags);
// close(fd) of one of the library's descriptors: constructed before the close drops it, recorded
// when destroyed after it (the call returns once the file is gone from the table).
class CaptureClose {
public:
    explicit CaptureClose(int fd);
    ~CaptureClose();
    CaptureClose(const CaptureClose&) = delete;
    CaptureClose& operator=(const CaptureClose&) = delete;

private:
    struct State;
    std::unique_ptr<State> s_;
};
// After a dup of oldfd to newfd_or_err (the dup family, fcntl F_DUPFD*).
void capture_dup(int oldfd, int newfd_or_err);
// After an mmap of one of the library's descriptors: the address, or MAP_FAILED with errno.
void capture_mmap(int fd, off_t off, size_t len, int prot, int flags, void* result, int err);
// A client mapping of memory at kernel address `kaddr` (len bytes) was made: the BOs there are the
// ones the client can write, whose pages the capture hashes at each submission.
void capture_cpu_mapping(const void* kaddr, size_t len);
// After a munmap of a mapping the library handed out.
void capture_munmap(void* addr, size_t len);

// One ioctl: constructed before the call (records the input; for GROUP_SUBMIT and VM_BIND the
// BO pages), done() after it with the call's result (>= 0 or -errno).
class CaptureIoctl {
public:
    CaptureIoctl(int fd, unsigned cmd, void* arg);
    ~CaptureIoctl();
    CaptureIoctl(const CaptureIoctl&) = delete;
    CaptureIoctl& operator=(const CaptureIoctl&) = delete;
    void done(int ret);

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace upanthor::preload
