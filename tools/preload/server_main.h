// `upanthor serve`: the driver (panthor on the mock GPU, real-thread runtime) as a daemon that
// serves every process whose preload library is a thin client of it (UPANTHOR_SERVER=PATH,
// remote_client.h). docs/preload.md "Two modes" has the model; remote_proto.h the protocol.
//
// DOC: One thread per client connection (a client thread's calls) runs the kernel code of each
// request as a kernel task whose user copies reach the client's memory (process_vm_readv/writev
// on its pid) and whose descriptor table is the client process's: a number the kernel hands out
// is a socketpair end sent to the client, a number it looks up is asked of the client. The main
// thread accepts connections and watches the server's socket ends: the hang-up of one (the last
// descriptor of it closed in every process) drops the file's reference, as the kernel's last
// fput does, and a line on stdout says what that released. A client process's BO mappings go
// when it exits (a pidfd). SIGTERM or SIGINT stops the server: clients' calls then fail with
// ENODEV, the files are released, the driver removed, and leaks reported (exit code 1).
#pragma once
#include <cstdio>
#include <string>

namespace upanthor::preload {

struct ServeOptions {
    std::string gpu = "default";  // a host GPU model (host/gpu_models.h)
    std::string socket;           // empty: serve_default_socket()
    std::string trace;            // the runtime's trace, written at exit (Chrome trace JSON)
};

// $XDG_RUNTIME_DIR/upanthor.sock, else /tmp/upanthor-<uid>.sock.
std::string serve_default_socket();

// Runs until SIGTERM or SIGINT. Exit code: 0, or 1 (boot failed, or problems at exit).
int serve_main(const ServeOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace upanthor::preload
