// upanthor: the simulator's command-line program (cli.h has the commands).
#include <string>
#include <vector>

#include "tools/upanthor/cli.h"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    return upanthor::cli_main(args, stdout, stderr);
}
