#!/usr/bin/env bash
# The main program in one command: installs what is missing, builds `upanthor` with the release
# preset and runs the default scenario, a 60 fps frame loop, writing its Perfetto trace.
#
#   bash scripts/run.sh                         # scenarios/frame.toml --trace frame.json
#   bash scripts/run.sh run scenarios/fw-hang.toml --coredump dumps   # any upanthor command line
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh >&2
cmake --preset release >/dev/null
cmake --build --preset release -j "${UPANTHOR_JOBS:-$(nproc)}" --target upanthor >&2

exe=build/release/tools/upanthor/upanthor
if [ $# -eq 0 ]; then
    set -- run scenarios/frame.toml --trace frame.json
    echo "open frame.json in https://ui.perfetto.dev" >&2
fi
exec "$exe" "$@"
