#!/usr/bin/env bash
# Install the system packages the project needs, when missing. Sourced by
# main.sh and test.sh; safe to run again (does nothing when all are there).
set -euo pipefail

# command -> Debian package
declare -A MRC_APT_DEPS=(
  [tclsh]=tcl
  [tshark]=tshark
  [verilator]=verilator
  [yosys]=yosys
)

missing=()
for cmd in "${!MRC_APT_DEPS[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${MRC_APT_DEPS[$cmd]}")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]} (apt)" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null 2>&1 || { echo "deps: cargo not found; install Rust first (rustup)" >&2; exit 1; }
