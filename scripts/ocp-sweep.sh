#!/usr/bin/env bash
# The OCP benchmark's full default sweep over two soft NICs (issue 17:
# "the OCP benchmark's full default sweep (1 B to 64 MiB) completes over
# the soft NIC with no error").
#
# Builds lib_mrc.so (scripts/libmrc.sh, release) and the OCP repository's
# benchmark, `mrc_example.c` and `utils.c` from
# $MRC_SHARED/third_party/ocp-mrc-benchmark unmodified, against our
# headers; then runs it as server and client in two processes, each on a
# soft NIC on a loopback address (127.0.NET.2 and 127.0.NET.1), with the
# benchmark's own defaults: message sizes 1 B to 64 MiB doubling, 1,000
# WRITEs and 100 warm-up WRITEs per size, depth 128, 4 KiB MTU, the
# timeout and retry counts it asks for.
#
# Usage: scripts/ocp-sweep.sh [MRC_EXAMPLE_OPTIONS...]
#   Options are passed to both sides (e.g. `-n 100 -s 1048576` for a
#   shorter sweep). Environment: OUT (build directory, default
#   ${CARGO_TARGET_DIR:-target}/ocp-sweep), NET (default 56), PORT (TCP
#   port of the benchmark's exchange, default 18556), MRC_SHARED (default
#   ../shared), LISTEN_WAIT (seconds to wait for the server, default 60).
# Prints the client's table and both exit codes. Exit 0 when both sides
# exit 0; 1 when either fails; 2 when it cannot build or start.
# Not for CI: the default sweep moves about 141 GiB, about 5 minutes on a
# 2-core host (docs/benchmarks.md, "host: the soft NIC between two
# processes").
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-${CARGO_TARGET_DIR:-$root/target}/ocp-sweep}"
net="${NET:-56}"
port="${PORT:-18556}"
shared="${MRC_SHARED:-$root/../shared}"
listen_wait="${LISTEN_WAIT:-60}"
src="$shared/third_party/ocp-mrc-benchmark"

fail_setup() {
  echo "ocp-sweep: $1" >&2
  exit 2
}

[ -f "$src/mrc_example.c" ] || fail_setup "the OCP benchmark is not at $src (set MRC_SHARED)"
"$root/scripts/libmrc.sh" "$out" > /dev/null || fail_setup "scripts/libmrc.sh failed"
gcc -O2 -std=gnu11 -I "$out/include" -o "$out/mrc_example" \
  "$src/mrc_example.c" "$src/utils.c" "$out/lib/lib_mrc.so" -lm ||
  fail_setup "the benchmark does not build against our headers"

# The server is ready when its TCP port listens (its stdout is buffered,
# and the client does not retry its connection).
# State 0A is LISTEN (a socket of an earlier run in TIME_WAIT is not).
listening() {
  local hex
  hex=$(printf ':%04X' "$port")
  awk -v p="$hex" 'substr($2, length($2) - 4) == p && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp
}

run_side() {
  local host="$1"
  shift
  MRC_DEVICE="soft:127.0.$net.$host" LD_LIBRARY_PATH="$out/lib" MRC_LOG_LEVEL=ERROR \
    "$out/mrc_example" "$@" -d mrc0 -g 0 -p "$port"
}

listening && fail_setup "TCP port $port already has a listener (set PORT)"
run_side 2 "$@" > "$out/server.log" 2>&1 &
server=$!
waited=0
until listening; do
  if ! kill -0 "$server" 2> /dev/null; then
    cat "$out/server.log" >&2
    fail_setup "the server exited before listening"
  fi
  [ "$waited" -ge $((listen_wait * 10)) ] && {
    kill "$server"
    fail_setup "the server did not listen on $port within $listen_wait s"
  }
  sleep 0.1
  waited=$((waited + 1))
done

start=$(date +%s)
run_side 1 127.0.0.1 "$@" > "$out/client.log" 2>&1
client_rc=$?
wait "$server"
server_rc=$?
cat "$out/client.log"
echo "ocp-sweep: client exit $client_rc, server exit $server_rc, $(($(date +%s) - start)) s (logs in $out)"
[ "$client_rc" -eq 0 ] && [ "$server_rc" -eq 0 ] || exit 1
