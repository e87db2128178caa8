#!/usr/bin/env bash
# Verilator line and toggle coverage of the RTL (the verilated MrcCore)
# from every cosim test: builds the core with coverage (MRC_COVERAGE_DIR makes
# cosim::nic::build_core add --coverage-line --coverage-toggle, and every Nic
# write its coverage.dat there when dropped), runs `cargo test -p cosim`
# (every test binary, failing ones included: their coverage counts too),
# merges the .dat files with verilator_coverage, writes an lcov .info and
# an annotated source, and prints line and toggle coverage per Verilog
# module, per block instance of the core and in total, worst first.
#
#   scripts/coverage.sh [OUT]      (default target/coverage)
#
# Extra `cargo test` arguments go in COVERAGE_TEST_ARGS (e.g. a test name
# filter); ignored tests are not run. docs/coverage.md explains the method
# and the figures.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/coverage}"
rm -rf "$out"
mkdir -p "$out/dat"
export MRC_COVERAGE_DIR="$PWD/$out/dat"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

start=$(date +%s)
# shellcheck disable=SC2086
cargo test -p cosim --no-fail-fast ${COVERAGE_TEST_ARGS:-} -- --test-threads=2 2>&1 | tee "$out/test.log" | grep -E '^test |^test result|Running'
test_status=${PIPESTATUS[0]}
end=$(date +%s)

shopt -s nullglob
dats=("$out"/dat/*.dat)
if [ ${#dats[@]} -eq 0 ]; then
  echo "coverage.sh: no coverage data written (no cosim test built a Nic?)" >&2
  exit 1
fi
verilator_coverage --write "$out/merged.dat" "${dats[@]}"
verilator_coverage --write-info "$out/coverage.info" "$out/merged.dat"
# The points name the Verilog in its model's cache directory
# (target/verilated/mrc_core-<hash>/mrc_core.v), where verilated::build
# writes it before the build; --annotate-all writes every file, not only
# the poorly covered ones.
if ! verilator_coverage --annotate "$out/annotated" --annotate-all --annotate-min 1 "$out/merged.dat" > "$out/annotate.log" 2>&1; then
  echo "coverage.sh: verilator_coverage --annotate failed (see $out/annotate.log):" >&2
  tail -n 5 "$out/annotate.log" >&2
fi

python3 - "$out/merged.dat" "$out/summary.txt" <<'PY'
import sys
from collections import defaultdict

# One coverage point per line: C '<key>\x02<value>\x01...' <count>.
# page = v_<kind>/<module>; h = instance hierarchy (TOP.mrc_core.<block>...).
points = []
with open(sys.argv[1], encoding="latin-1") as f:
    for line in f:
        if not line.startswith("C '"):
            continue
        body, count = line.rstrip("\n").rsplit(" ", 1)
        kv = dict(p.split("\x02", 1) for p in body[3:-1].split("\x01") if "\x02" in p)
        kind, _, module = kv.get("page", "").partition("/")
        # Line coverage = Verilator's line and branch points.
        cls = {"v_line": "line", "v_branch": "line", "v_toggle": "toggle"}.get(kind)
        if cls:
            hier = kv.get("h", "").split(".")
            block = hier[2] if len(hier) > 2 else "(top)"
            points.append((cls, module, block, int(count) > 0))

def table(key, title):
    agg = defaultdict(lambda: {"line": [0, 0], "toggle": [0, 0]})
    for cls, module, block, hit in points:
        a = agg[module if key == "module" else block][cls]
        a[0] += hit
        a[1] += 1
    pct = lambda c: 100.0 * c[0] / c[1] if c[1] else 100.0
    rows = sorted(agg.items(), key=lambda kv: (pct(kv[1]["line"]), -kv[1]["line"][1]))
    lines = [f"{title:<34} {'line':>18} {'toggle':>20}"]
    for name, a in rows:
        l, t = a["line"], a["toggle"]
        lines.append(f"{name:<34} {pct(l):6.1f}% {l[0]:5}/{l[1]:<5} {pct(t):6.1f}% {t[0]:6}/{t[1]:<6}")
    return lines, rows, pct

out = []
for key, title in (("block", "block instance (TOP.mrc_core.*)"), ("module", "Verilog module")):
    lines, rows, pct = table(key, title)
    out += lines + [""]
tot = {c: [sum(1 for p in points if p[0] == c and p[3]), sum(1 for p in points if p[0] == c)] for c in ("line", "toggle")}
for c in ("line", "toggle"):
    h, n = tot[c]
    out.append(f"TOTAL {c} coverage: {100.0 * h / n if n else 0:.1f}% ({h}/{n} points)")
_, rows, pct = table("module", "")
worst = [f"{m} {pct(a['line']):.1f}% ({a['line'][1] - a['line'][0]} uncovered)" for m, a in rows if a["line"][1] and pct(a["line"]) < 90][:15]
out.append("worst-covered modules (line < 90%): " + ("; ".join(worst) if worst else "none"))
text = "\n".join(out)
print(text)
open(sys.argv[2], "w").write(text + "\n")
PY
echo "coverage.sh: tests took $((end - start)) s (exit status $test_status); data in $out (merged.dat, coverage.info, annotated/, summary.txt)"
grep -E '^test result' "$out/test.log" | awk '{p+=$4; f+=$6} END {print "coverage.sh: tests " p " passed, " f " failed"}'
