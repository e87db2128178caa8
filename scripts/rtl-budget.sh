#!/usr/bin/env bash
# Whole-core resource estimate and the U250 budget (<= 15% LUT, <= 30%
# BRAM; exits non-zero over budget): Yosys synthesis of mrc_core, about 15
# CPU minutes on one thread, so it runs here and not in the test command
# (CI's 30-minute budget on 2 cores). Record the figures in
# docs/benchmarks.md ("hw: resource estimates and targets") when the RTL
# changes. Usage: scripts/rtl-budget.sh [OUT_DIR] (default target/rtl-budget).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
out="${1:-target/rtl-budget}"
cargo build --locked -p mrc
mrc="target/debug/mrc"
"$mrc" rtl synth --block mrc_core --out "$out"
"$mrc" rtl budget --board u250 --from "$out/synth.json" --out "$out"
