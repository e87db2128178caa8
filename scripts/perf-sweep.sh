#!/usr/bin/env bash
# The issue-15 sweep: `mrc perf` over the co-simulated fabric for every
# MTU x message size x depth x QPs below, one run each, no loss; prints
# one row per run (completed / posted WRITEs, Gb/s, retransmits, RTOs,
# simulated time, wall time) and exits non-zero if any run failed.
#
# Usage: scripts/perf-sweep.sh [MRC_BINARY]   (default target/release/mrc;
#   build it with `cargo build --release -p mrc`). Environment overrides
#   (space-separated lists): MTUS, SIZES, DEPTHS, QPS, ITERS (WRITEs per
#   QP, default 32), LIMIT (simulated time limit, default 20ms).
# A few minutes of wall time in a release build (docs/benchmarks.md "driver:
# the issue-15 sweep"), far more in a debug build: a script, not a test.
set -uo pipefail
cd "$(dirname "$0")/.."
MRC="${1:-${CARGO_TARGET_DIR:-target}/release/mrc}"
MTUS="${MTUS:-1024 2048 4096 8192}"
SIZES="${SIZES:-4KiB 64KiB 256KiB}"
DEPTHS="${DEPTHS:-1 16}"
QPS="${QPS:-1 2}"
ITERS="${ITERS:-32}"
LIMIT="${LIMIT:-20ms}"
fail=0
printf '%6s %8s %5s %3s %9s %9s %6s %5s %10s %7s\n' mtu size depth qps completed Gb/s rtx rto sim_us wall_s
for mtu in $MTUS; do
  for size in $SIZES; do
    for depth in $DEPTHS; do
      for qps in $QPS; do
        out="$("$MRC" perf --quiet --json --mtu "$mtu" --size "$size" --tx-depth "$depth" \
          --qps "$qps" --iters "$ITERS" --time-limit "$LIMIT" 2>&1)"
        row="$(printf '%s' "$out" | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)
except Exception:
    print("error"); sys.exit()
print("%d/%d %.2f %d %d %.1f %.1f %s" % (r["completed"], r["messages"], r["bandwidth_gbps"],
      r["retransmits"], r["rtos"], r["sim_time_us"], r["wall_s"], "ok" if r["ok"] else "FAILED"))')"
        set -- $row
        if [ "${7:-}" != ok ]; then fail=1; fi
        printf '%6s %8s %5s %3s %9s %9s %6s %5s %10s %7s %s\n' "$mtu" "$size" "$depth" "$qps" "${1:-?}" "${2:-}" "${3:-}" "${4:-}" "${5:-}" "${6:-}" "${7:-$row}"
      done
    done
  done
done
exit $fail
