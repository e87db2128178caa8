#!/usr/bin/env bash
# The issue-15 soak: `mrc cosim` (two verilated NICs over the multipath
# fabric, compared with the golden model) over a sweep of seeds and random
# faults until TARGET messages in total have been delivered and checked.
# Each run draws, from its seed: the keyed loss rate (0, 0.1%, 1% or 3%
# each way), a fault (none, a blackholed EV, a flapping EV, or both, on a
# random EV at a random time), the first PSN (random, or 1 to 255 before
# the 24-bit wrap) and the MTU (1, 2 or 4 KiB). A run passes when the
# scoreboard passes (every message exactly once, byte-identical, in order,
# no QP / DMA error, no time-out) and the golden model delivered the same
# messages; resends and EVs marked ASSUMED_BAD of both are printed, not
# judged (the named scenarios judge them: `mrc cosim --scenario all`).
#
# Usage: scripts/cosim-soak.sh [MRC_BINARY]   (default
#   ${CARGO_TARGET_DIR:-target}/release/mrc; build it with
#   `cargo build --release -p mrc`). Environment: TARGET (messages in all,
#   default 1000000), MSGS (messages per run, default 2000, at most
#   60000), SEED (first seed, default 1), MAX_SIZE (default 8KiB).
# Prints one line per run and a total; exits 1 if any run failed.
# Not for CI: about 35 messages per second of wall time in a release build
# (500-message runs, 2 cores shared with other builds; docs/benchmarks.md),
# so 10^6 messages take about 8 hours.
set -uo pipefail
cd "$(dirname "$0")/.."
MRC="${1:-${CARGO_TARGET_DIR:-target}/release/mrc}"
TARGET="${TARGET:-1000000}"
MSGS="${MSGS:-2000}"
SEED="${SEED:-1}"
MAX_SIZE="${MAX_SIZE:-8KiB}"
if [ ! -x "$MRC" ]; then
  echo "cosim-soak: no mrc binary at $MRC (cargo build --release -p mrc)" >&2
  exit 2
fi
LOSSES=(0 0.001 0.01 0.03)
MTUS=(1024 2048 4096)
total=0
passed=0
runs=0
failed=0
start=$(date +%s)
seed=$SEED
printf '%6s %6s %5s %5s %-24s %8s %11s %9s %9s %7s %6s  %s\n' \
  seed msgs mtu loss fault start_psn completed resends to_bad wall_s msg/s verdict
while [ "$total" -lt "$TARGET" ]; do
  RANDOM=$seed
  loss=${LOSSES[$((RANDOM % 4))]}
  mtu=${MTUS[$((RANDOM % 3))]}
  ev=$((RANDOM % 8))
  at=$((10 + RANDOM % 200))
  fault=()
  case $((RANDOM % 4)) in
    0) fault=(--no-failure); desc=none ;;
    1) fault=(--fail-ev "$ev@${at}us"); desc="hole $ev@${at}us" ;;
    2) fault=(--no-failure --flap-ev "$ev@${at}us/40us/20us"); desc="flap $ev@${at}us" ;;
    3)
      ev2=$(((ev + 1 + RANDOM % 7) % 8))
      fault=(--fail-ev "$ev@${at}us" --flap-ev "$ev2@20us/40us/20us")
      desc="hole $ev@${at}us+flap $ev2"
      ;;
  esac
  if [ $((RANDOM % 2)) -eq 0 ]; then
    psn=$(((RANDOM << 9 ^ RANDOM) & 0xFFFFFF))
  else
    psn=$((0x1000000 - 1 - RANDOM % 255))
  fi
  n=$MSGS
  if [ $((TARGET - total)) -lt "$n" ]; then n=$((TARGET - total)); fi
  limit=$((n * 5000 > 5000000 ? n * 5000 : 5000000))
  t0=$(date +%s.%N)
  out="$("$MRC" cosim --quiet --json --seed "$seed" --messages "$n" --max-size "$MAX_SIZE" \
    --mtu "$mtu" --loss "$loss" --start-psn "$psn" --cycle-limit "$limit" "${fault[@]}" 2>&1)"
  wall=$(echo "$(date +%s.%N) - $t0" | bc)
  row="$(printf '%s' "$out" | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)
except Exception:
    print("0 error - -"); sys.exit()
h, g = r["hardware"], r["golden"]
ok = h["ok"] and g is not None and g["same_delivery"]
bad = sum(1 for c in h["ev_changes"] if c["new_state"] == "assumed_bad")
print("%d %s %d/%s %d/%s" % (h["messages_completed"], "ok" if ok else "FAILED",
      h["retransmissions"], g["golden_retransmissions"] if g else "-",
      bad, g["golden_ev_marked_bad"] if g else "-"))')"
  read -r done_n verdict resends tobad <<<"$row"
  runs=$((runs + 1))
  total=$((total + n))
  if [ "$verdict" = ok ]; then
    passed=$((passed + done_n))
  else
    failed=$((failed + 1))
    printf '%s\n' "$out" | tail -20 >&2
  fi
  rate=$(echo "scale=1; $n / $wall" | bc)
  printf '%6s %6s %5s %5s %-24s %8x %11s %9s %9s %7.1f %6s  %s\n' \
    "$seed" "$n" "$mtu" "$loss" "$desc" "$psn" "$done_n/$n" "${resends:-?}" "${tobad:-?}" "$wall" "$rate" "$verdict"
  seed=$((seed + 1))
done
elapsed=$(($(date +%s) - start))
echo "total: $passed of $total messages delivered and checked in $runs runs, $failed runs failed," \
  "${elapsed} s wall ($(echo "scale=1; $total / ($elapsed + 0.001)" | bc) messages/s)"
[ "$failed" -eq 0 ]
