#!/usr/bin/env bash
# The main job.
#   0. mrc cosim: the NIC itself. Two verilated MrcCores (the RTL) joined
#      by a simulated 8-path fabric: 1,000 WRITE / WRITE-IMM messages of
#      1 B to 8 KiB from NIC A into NIC B's memory, EV 3 failing at 50 us,
#      0.1% loss. A scoreboard checks exactly-once, byte-identical
#      placement and in-order completions; the golden model runs the same
#      scenario and its figures are printed side by side.
# Then the golden model alone at scale, 1000 x 64 KiB messages over 8 EVs
# (paths) with 0.1% random loss and EV 0 failing for good at 50 us:
#   1. MRC: sprays over the 8 EVs; the failure costs only the packets that
#      were on EV 0, which are resent on other EVs; the QP survives.
#   2. RoCEv2 RC: one path, and it is EV 0 (its 5-tuple). Go-back-N retries
#      until the retry count runs out and the QP goes to ERR, as a
#      retry-exceeded error kills an NCCL job today.
# Extra arguments go to runs 1 and 2 (e.g. --pcap out.pcap, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cargo build --release --locked --bin mrc -j2
common=(--evs 8 --fail-ev 0@50us --loss 0.001 --messages 1000 --size 64KiB "$@")

echo "== mrc cosim: two NICs (RTL, Verilator) over a failing multipath fabric, golden model alongside =="
./target/release/mrc cosim --evs 8 --fail-ev 3@50us --loss 0.001 --messages 1000 --max-size 8KiB
echo

echo "== MRC =="
./target/release/mrc transfer --transport mrc "${common[@]}"

echo
echo "== RoCEv2 RC baseline, same traffic, same failure =="
if ./target/release/mrc transfer --transport rc "${common[@]}"; then
  echo "(RC completed)"
else
  echo "(RC did not complete: its only path failed; this is the behaviour MRC removes)"
fi
