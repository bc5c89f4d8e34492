#!/bin/sh
# Runs one client of `upanthor serve` (docs/preload.md "Two modes") against a server of its own:
#   with_server.sh UPANTHOR SOCKET CLIENT [ARGS...]
# starts `UPANTHOR serve --socket SOCKET` (its output in SOCKET.log), waits for the socket, runs
# CLIENT with LD_PRELOAD=$SERVE_CLIENT_PRELOAD, UPANTHOR_SERVER=SOCKET, UPANTHOR_SERVER_PID and
# UPANTHOR_SERVER_LOG, then stops the server with SIGTERM and prints its log. The exit status is
# the client's, or 1 when the server failed (leaks or reports at exit) or never came up. The server
# itself runs without the client's LD_PRELOAD: the library must not interpose on the driver.
# SERVE_GPU=MODEL in the environment boots that GPU model (`serve --gpu MODEL`).
set -u
upanthor=$1
sock=$2
shift 2
log="$sock.log"
rm -f "$sock" "$log"
env -u LD_PRELOAD "$upanthor" serve ${SERVE_GPU:+--gpu "$SERVE_GPU"} --socket "$sock" >"$log" 2>&1 &
spid=$!
tries=0
while [ ! -S "$sock" ]; do
    if ! kill -0 "$spid" 2>/dev/null || [ "$tries" -ge 1200 ]; then
        echo "with_server.sh: the server did not come up"
        cat "$log"
        kill -TERM "$spid" 2>/dev/null
        exit 1
    fi
    tries=$((tries + 1))
    sleep 0.05
done
LD_PRELOAD="${SERVE_CLIENT_PRELOAD:-}" UPANTHOR_SERVER="$sock" UPANTHOR_SERVER_PID="$spid" \
    UPANTHOR_SERVER_LOG="$log" "$@"
rc=$?
kill -TERM "$spid" 2>/dev/null
wait "$spid"
src=$?
echo "--- upanthor serve (exit $src) ---"
cat "$log"
if [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
if [ "$src" -ne 0 ]; then
    echo "with_server.sh: the server failed"
    exit 1
fi
exit 0
