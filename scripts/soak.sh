#!/usr/bin/env bash
# The issue-15 soak: `mrc cosim` (two verilated NICs over the multipath
# fabric, compared with the golden model) over seeds x random faults, on
# both wires, until a message count or a time budget is reached.
#
# Usage: scripts/soak.sh [--messages N] [--time T] [--seed S] [--per-run N]
#                        [--mrc PATH]
#   --messages N   stop once N messages have been run (default 1000000)
#   --time T       stop starting runs after T of wall time: 90s, 40m, 8h
#                  (default: none); whichever limit comes first
#   --seed S       first seed (default 1); run k uses seed S + k
#   --per-run N    messages of a random run (default 500; a named scenario
#                  runs as many, a sweep cell its own)
#   --mrc PATH     the mrc binary (default
#                  ${CARGO_TARGET_DIR:-target}/release/mrc; build it with
#                  `cargo build --release -p mrc`)
#
# Each run draws from its seed:
#   * the wire: legacy or mrc10 (`--wire`), alternately by seed;
#   * its kind: 6 in 10 a random run, 3 in 10 a named scenario, 1 in 10 a
#     sweep cell (docs/cosim.md, "The sweep");
#   * a random run: keyed loss 0, 0.1%, 1% or 3% each way; a fault (none,
#     a blackholed EV, a flapping EV, both, on random EVs from a random
#     time); MTU 256 B to 8 KiB; messages of 1 B up to 1, 8 or 64 KiB;
#     1, 4 or 16 in flight; 1, 2 or 4 QP pairs; the first PSN random or
#     just before the 24-bit wrap. It passes when the scoreboard passes
#     (every message exactly once, byte-identical, in order, no QP or DMA
#     error, no time-out) and the model delivered the same messages;
#     resends and EVs marked (hardware/model) are printed, not judged: a
#     random fault has no scenario's allowances;
#   * a named scenario (the degraded EV, the incast, 16 QPs, the PSN wrap,
#     a remote-access error, the whole window in flight during a failure
#     ...: every one of `mrc cosim --scenario all`; SCENARIOS=... sets
#     the mix) or a random sweep cell: judged by its verdict, as
#     `mrc cosim --scenario` judges it.
# One line per run (its figures, then the command that reproduces it),
# then a summary: messages, failures by class (stall, scoreboard,
# delivery, counts, error), CPU seconds and messages per CPU-second.
# Exit status 0 every run passed, 1 a run failed, 2 bad usage or no mrc.
# Not for CI (docs/benchmarks.md gives its rate: 10^6 messages take hours).
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "soak: $1 (usage: scripts/soak.sh [--messages N] [--time 40m] [--seed S] [--per-run N] [--mrc PATH])" >&2
  exit 2
}

TARGET=1000000
BUDGET_S=0
SEED=1
PER_RUN=500
MRC="${CARGO_TARGET_DIR:-target}/release/mrc"
while [ $# -gt 0 ]; do
  case "$1" in
    --messages) TARGET="${2:-}"; shift 2 ;;
    --time)
      t="${2:-}"
      case "$t" in
        *h) BUDGET_S=$((${t%h} * 3600)) ;;
        *m) BUDGET_S=$((${t%m} * 60)) ;;
        *s) BUDGET_S=${t%s} ;;
        *) usage "--time $t: a number with s, m or h" ;;
      esac
      shift 2
      ;;
    --seed) SEED="${2:-}"; shift 2 ;;
    --per-run) PER_RUN="${2:-}"; shift 2 ;;
    --mrc) MRC="${2:-}"; shift 2 ;;
    *) usage "unknown argument $1" ;;
  esac
done
for v in TARGET BUDGET_S SEED PER_RUN; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || usage "$v must be a whole number, not '${!v}'"
done
[ "$PER_RUN" -ge 4 ] || usage "--per-run must be at least 4 (the most QP pairs a run draws)"
[ -x "$MRC" ] || { echo "soak: no mrc binary at $MRC (cargo build --release -p mrc)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "soak: /usr/bin/time is needed to count CPU seconds" >&2; exit 2; }

# The named scenarios of the mix: those of `mrc cosim --scenario all`.
read -r -a SCENARIO_MIX <<<"${SCENARIOS:-lossless loss-0.1 loss-1 loss-5 ev-blackholed ipv6-ev32 ev-flapping ev-degraded rate-25 16-qps incast incast-nscc mpr-window-failure psn-wrap remote-access}"
LOSSES=(0 0.001 0.01 0.03)
MTUS=(256 512 1024 2048 4096 8192)
MAX_SIZES=(1024 8192 65536)
DEPTHS=(1 4 16)
QPS=(1 2 4)
SIZES=(1B mtu-1 mtu mtu+1 window beyond)
FAULTS=(none loss hole flap)

# Read one run's JSON on stdin (a plain run, a scenario list or a sweep)
# and print "messages completed verdict class resends to_bad".
judge_py='
import json, sys
mode, code = sys.argv[1], int(sys.argv[2])
try:
    r = json.load(sys.stdin)
except Exception:
    print("0 0 FAILED error - -"); sys.exit()
if mode == "random":
    h, g = r["hardware"], r["golden"]
    ok = h["ok"] and g is not None and g["same_delivery"]
    cls = "-" if ok else "stall" if h["timed_out"] else "scoreboard" if not h["ok"] else "delivery"
    bad = sum(1 for c in h["ev_changes"] if c["new_state"] == "assumed_bad")
    print(h["messages"], h["messages_completed"], "ok" if ok else "FAILED", cls,
          "%d/%s" % (h["retransmissions"], g["golden_retransmissions"] if g else "-"),
          "%d/%s" % (bad, g["golden_ev_marked_bad"] if g else "-"))
elif mode == "scenario":
    o = r[0]
    h, g, v = o["hardware"], o["golden"], o["verdict"]
    ok = o["ok"] and code == 0
    if ok:
        cls = "-"
    elif h["timed_out"]:
        cls = "stall"
    elif not h["scoreboard"]["all_completed"] or not all(h["scoreboard"][k] for k in ("send_in_order", "data_identical", "placed_once", "imm_in_order", "no_protocol_error")):
        cls = "scoreboard"
    elif g is not None and not g["same_delivery"]:
        cls = "delivery"
    else:
        cls = "counts"
    chk = {c["what"]: c for c in v["checks"]}
    pair = lambda k: "%s/%s" % (chk[k]["hw"], chk[k]["golden"]) if k in chk else "-"
    print(h["messages"], h["messages_completed"], "ok" if ok else "FAILED", cls,
          pair("resends"), pair("EVs marked ASSUMED_BAD"))
else:
    o = r["outcomes"][0]
    ok = o["ok"] and code == 0
    chk = {c["what"]: c for c in o["verdict"]["checks"]}
    pair = lambda k: "%s/%s" % (chk[k]["hw"], chk[k]["golden"]) if k in chk else "-"
    print(o["messages"], o["hw_completed"], "ok" if ok else "FAILED", o["failure"] or "-",
          pair("resends"), pair("EVs marked ASSUMED_BAD"))
'

runs=0 total=0 completed=0 failed=0 cpu_total=0
declare -A by_class=()
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%5s %6s %-8s %6s %9s %-10s %-9s %8s %7s %6s  %s\n' \
  run seed kind wire completed class resends to_bad cpu_s wall_s command
seed=$SEED
while [ "$total" -lt "$TARGET" ]; do
  if [ "$BUDGET_S" -gt 0 ] && [ $(($(date +%s) - start)) -ge "$BUDGET_S" ]; then
    break
  fi
  RANDOM=$seed
  wire=$([ $((seed % 2)) -eq 0 ] && echo legacy || echo mrc10)
  pick=$((RANDOM % 10))
  n=$PER_RUN
  if [ $((TARGET - total)) -lt "$n" ]; then n=$((TARGET - total)); fi
  [ "$n" -ge 4 ] || n=4
  if [ "$pick" -lt 6 ]; then
    kind=random
    loss=${LOSSES[$((RANDOM % ${#LOSSES[@]}))]}
    mtu=${MTUS[$((RANDOM % ${#MTUS[@]}))]}
    max=${MAX_SIZES[$((RANDOM % ${#MAX_SIZES[@]}))]}
    depth=${DEPTHS[$((RANDOM % ${#DEPTHS[@]}))]}
    qps=${QPS[$((RANDOM % ${#QPS[@]}))]}
    ev=$((RANDOM % 8))
    at=$((5 + RANDOM % 200))
    case $((RANDOM % 4)) in
      0) fault=(--no-failure) ;;
      1) fault=(--fail-ev "$ev@${at}us") ;;
      2) fault=(--no-failure --flap-ev "$ev@${at}us/40us/20us") ;;
      3) fault=(--fail-ev "$ev@${at}us" --flap-ev "$(((ev + 1 + RANDOM % 7) % 8))@20us/40us/20us") ;;
    esac
    # The RTO above the queue the QPs' windows can build at the 100 Gb/s
    # link (as the named scenarios raise theirs, `rto_above_the_queue`):
    # an RTO shorter than the queue is a scenario of its own.
    pkts=$((depth * ((max + mtu - 1) / mtu)))
    [ "$pkts" -le 256 ] || pkts=256
    worst_ns=$((2300 + 500 + qps * pkts * (mtu + 90) * 8 / 100))
    rto_exp=4
    while [ $((1024 << rto_exp)) -lt "$worst_ns" ]; do rto_exp=$((rto_exp + 1)); done
    if [ $((RANDOM % 2)) -eq 0 ]; then
      psn=$(((RANDOM << 9 ^ RANDOM) & 0xFFFFFF))
    else
      psn=$((0x1000000 - 1 - RANDOM % 255))
    fi
    cmd=("$MRC" cosim --quiet --json --wire "$wire" --seed "$seed" --messages "$n" --max-size "$max"
      --mtu "$mtu" --in-flight "$depth" --qps "$qps" --loss "$loss" --start-psn "$psn" --timeout-exp "$rto_exp"
      --cycle-limit $((n * 20000 > 5000000 ? n * 20000 : 5000000)) "${fault[@]}")
  elif [ "$pick" -lt 9 ]; then
    kind=scenario
    name=${SCENARIO_MIX[$((RANDOM % ${#SCENARIO_MIX[@]}))]}
    cmd=("$MRC" cosim --quiet --json --wire "$wire" --seed "$seed" --messages "$n" --scenario "$name")
  else
    kind=sweep
    cell="sweep/m${MTUS[$((RANDOM % ${#MTUS[@]}))]}/${SIZES[$((RANDOM % ${#SIZES[@]}))]}"
    cell="$cell/d$((1 + RANDOM % 16))/q${QPS[$((RANDOM % ${#QPS[@]}))]}/${FAULTS[$((RANDOM % ${#FAULTS[@]}))]}"
    cmd=("$MRC" cosim --quiet --json --wire "$wire" --seed "$seed" --scenario "$cell")
  fi
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err"
  code=$?
  wall=$(echo "$(date +%s.%N) - $t0" | bc)
  cpu=$(awk '/^[0-9.]+ [0-9.]+$/ { s = $1 + $2 } END { printf "%.2f", s }' "$tmp/cpu")
  read -r msgs done_n verdict class resends tobad < <(python3 -c "$judge_py" "$kind" "$code" <"$tmp/out")
  if [ "$code" -eq 2 ]; then verdict=FAILED class=error; fi
  [ "$msgs" -gt 0 ] 2>/dev/null || msgs=$n
  runs=$((runs + 1))
  total=$((total + msgs))
  completed=$((completed + done_n))
  cpu_total=$(echo "$cpu_total + $cpu" | bc)
  if [ "$verdict" != ok ]; then
    failed=$((failed + 1))
    by_class[$class]=$((${by_class[$class]:-0} + 1))
    sed -n '1,3p' "$tmp/err" | sed 's/^/      stderr: /'
  fi
  # The command as it can be pasted: without --quiet --json, the table.
  shown="${cmd[*]}"
  shown="${shown/ --quiet --json/}"
  printf '%5s %6s %-8s %6s %9s %-10s %-9s %8s %7s %6.1f  %s\n' \
    "$runs" "$seed" "$kind" "$wire" "$done_n/$msgs" "${class}" "$resends" "$tobad" "$cpu" "$wall" "$shown"
  seed=$((seed + 1))
done
elapsed=$(($(date +%s) - start))
classes=""
for c in "${!by_class[@]}"; do classes="$classes $c ${by_class[$c]}"; done
rate=$(echo "scale=2; $total / ($cpu_total + 0.001)" | bc)
echo "soak: $runs runs, $total messages run, $completed completed, $failed runs failed${classes:+ (by class:$classes)};" \
  "$cpu_total CPU s, $elapsed s wall, $rate messages per CPU-second; seeds $SEED..$((seed - 1))"
[ "$failed" -eq 0 ]
