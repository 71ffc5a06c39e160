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

# The same tests again in a second tree built with AddressSanitizer and UndefinedBehaviorSanitizer,
# any report a failure (cmake/sanitizers.cmake); built with clang-15 when it is installed (the
# set-up script installs it), which adds the loaders' libFuzzer harnesses, about a minute of
# fuzzing in all (tests/fuzz/).
asan_build=${TPROP_ASAN_BUILD_DIR:-build-asan}
asan_options=(-DTPROP_SANITIZE=ON)
if command -v clang++-15 >/dev/null 2>&1; then
  asan_options=(-DCMAKE_C_COMPILER=clang-15 -DCMAKE_CXX_COMPILER=clang++-15 -DTPROP_FUZZ=ON)
fi
# Warnings are the normal tree's business (its compiler is the project's); clang's own set would
# fail CI on what no one else builds with.
cmake -S . -B "$asan_build" -G Ninja -DTPROP_WERROR=OFF "${asan_options[@]}" >/dev/null
cmake --build "$asan_build" -j "$(nproc)"
ctest --test-dir "$asan_build" --output-on-failure --no-tests=error -j "$(nproc)"
