#!/usr/bin/env bash
# The README's two commands, set-up included, on a fresh Debian 12 machine:
#   cmake/dev.sh run [tprop run arguments...]   installs, builds, runs `tprop run` (default scene)
#   cmake/dev.sh test                            installs, builds, runs the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
[ $# -gt 0 ] && shift
case "$mode" in
  run|test) ;;
  *) echo "usage: cmake/dev.sh run [args...] | cmake/dev.sh test" >&2; exit 2 ;;
esac

bash cmake/setup-debian.sh

build=${TPROP_BUILD_DIR:-build}
werror=OFF
[ -n "${CI:-}" ] && werror=ON
cmake -S . -B "$build" -G Ninja -DTPROP_WERROR=$werror >/dev/null
cmake --build "$build" -j "$(nproc)"

if [ "$mode" = run ]; then
  exec "$build/tprop" run "$@"
fi
# In CI a missing Vulkan device is a failure, not a skip.
[ -n "${CI:-}" ] && export TPROP_REQUIRE_GPU=1
ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$(nproc)"
