#!/usr/bin/env bash
# The whole test suite: system packages, build, every test of the workspace,
# lints, and a smoke run of the main job for both transports.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
cargo build --workspace --all-targets --locked
cargo test --workspace --locked
cargo clippy --workspace --all-targets --locked -- -D warnings

# The main job must run and succeed for both transports (it exits non-zero
# when a message is lost, corrupted or completed out of order).
for t in mrc rc; do
  cargo run --quiet --locked --bin mrc -- transfer --transport "$t" --evs 8 --fail-ev 3@50us \
    --loss 0.001 --messages 200 --size 64KiB >/dev/null
done
echo "scripts/test.sh: all checks passed"
