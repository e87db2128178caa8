#!/usr/bin/env bash
# The main job: 1000 x 64 KiB messages between two endpoints over 8 EVs
# (paths) with 0.1% random loss, and EV 0 failing for good at 50 us.
#   1. MRC: sprays over the 8 EVs; the failure costs only the packets that
#      were on EV 0, which are resent on other EVs; the QP survives.
#   2. RoCEv2 RC: one path, and it is EV 0 (its 5-tuple). Go-back-N retries
#      until the retry count runs out and the QP goes to ERR, as a
#      retry-exceeded error kills an NCCL job today.
# Extra arguments go to both runs (e.g. --pcap out.pcap, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cargo build --release --locked --bin mrc -j2
common=(--evs 8 --fail-ev 0@50us --loss 0.001 --messages 1000 --size 64KiB "$@")

echo "== MRC =="
./target/release/mrc transfer --transport mrc "${common[@]}"

echo
echo "== RoCEv2 RC baseline, same traffic, same failure =="
if ./target/release/mrc transfer --transport rc "${common[@]}"; then
  echo "(RC completed)"
else
  echo "(RC did not complete: its only path failed; this is the behaviour MRC removes)"
fi
