#!/usr/bin/env bash
# Build lib_mrc.so: the Rust core (crate libmrc, a static library over the
# driver) linked with the C layer (libmrc/c, compiled against the system's
# <infiniband/verbs.h>) and the export map (libmrc/libmrc.map). Also
# writes libibverbs.so / libibverbs.so.1 beside it (links to the same
# file: one library, so libmrc and its verbs objects share one engine),
# the headers of libmrc/include (mrc.h, mrc_ctl.h and their version
# headers) and a pkg-config file.
#
#   scripts/libmrc.sh [OUT_DIR]      default: target/libmrc
#   MRC_LIBMRC_PROFILE=debug|release (default release)
#   MRC_LIBMRC_FEATURES=cosim        also `cosim:IP[:PORT]` devices
#   MRC_LIBMRC_CORE=PATH             link this libmrc_core.a, built already
#                                    (the tests: libmrc/tests/ocp_benchmark.rs)
#
# Needs gcc and libibverbs-dev (scripts/deps.sh installs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/target/libmrc}"
profile="${MRC_LIBMRC_PROFILE:-release}"
mkdir -p "$out/lib" "$out/include" "$out/lib/pkgconfig"
if [ ! -f /usr/include/infiniband/verbs.h ]; then
  echo "scripts/libmrc.sh: <infiniband/verbs.h> not found: apt-get install libibverbs-dev" >&2
  exit 2
fi
flag=""
[ "$profile" = release ] && flag="--release"
# MRC_LIBMRC_FEATURES=cosim adds `cosim:IP` devices (the verilated card on
# a UDP socket; Verilator needed when one is opened).
features="${MRC_LIBMRC_FEATURES:-}"
core="${MRC_LIBMRC_CORE:-}"
if [ -z "$core" ]; then
  cargo build -q $flag -p libmrc --locked ${features:+--features "$features"}
  target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  core="$target_dir/$profile/libmrc_core.a"
elif [ ! -f "$core" ]; then
  echo "scripts/libmrc.sh: MRC_LIBMRC_CORE=$core: no such file" >&2
  exit 2
fi
gcc -shared -fPIC -O2 -std=gnu11 -Wall -Werror \
  -I"$root/libmrc/include" -I"$root/libmrc/c" \
  -o "$out/lib/lib_mrc.so" "$root/libmrc/c/verbs.c" "$root/libmrc/c/mrc.c" "$root/libmrc/c/mrc_ctl.c" "$core" \
  -Wl,--version-script="$root/libmrc/libmrc.map" -Wl,-soname,lib_mrc.so \
  -lpthread -ldl -lm -lgcc_s
ln -sf lib_mrc.so "$out/lib/libibverbs.so.1"
ln -sf lib_mrc.so "$out/lib/libibverbs.so"
cp "$root"/libmrc/include/*.h "$out/include/"
cat > "$out/lib/pkgconfig/libmrc.pc" <<PC
prefix=$out
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libmrc
Description: The MRC C API (Open MRC): lib_mrc.so with its libibverbs objects
Version: 1.0.1
Libs: -L\${libdir} -l_mrc
Cflags: -I\${includedir}
PC
echo "$out/lib/lib_mrc.so"
