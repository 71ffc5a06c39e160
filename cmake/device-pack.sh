#!/usr/bin/env bash
# Packs what a lent GPU machine (the workplace's `device` tool) needs to run
# cmake/device-check.sh there: the GPU tests, tprop_bench and tprop, built here and stripped,
# and the Debian 12 packages of the Vulkan loader, libglvnd (the NVIDIA driver loads its
# libGLdispatch) and the validation layers, none of which that machine has and none of which it
# can fetch. Everything goes to .device/, which git ignores (through .git/info/exclude), so that
# the tool's `carry` takes it:
#
#   cmake/device-pack.sh                       here, after a build (TPROP_BUILD_DIR, default build)
#   device run, carry [".device"], command "bash cmake/device-check.sh STEP..."
#
# A lent machine gives a session 15 minutes, its start included: build and test here first,
# then measure there in one or two calls (device-check.sh's steps, sized to fit).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${TPROP_BUILD_DIR:-build}
pack=.device
for f in tests/gpu_tests host/tprop_bench tprop; do
  [ -x "$build/$f" ] || { echo "device-pack: $build/$f is missing: build the tree first" >&2; exit 1; }
done
cmake --build "$build" -j "$(nproc)" --target gpu_tests tprop_bench tprop_cli

rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/debs"
# Stripped: the three come to about 7 MB, where their symbols make them about 100 MB (the
# tool carries at most 64 MiB).
strip -o "$pack/bin/gpu_tests" "$build/tests/gpu_tests"
strip -o "$pack/bin/tprop_bench" "$build/host/tprop_bench"
strip -o "$pack/bin/tprop" "$build/tprop"

# amd64 packages whatever this machine is, with package lists of their own (the system's are
# left alone).
lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
mkdir -p "$lists/partial"
apt_options=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
apt-get "${apt_options[@]}" update >/dev/null
(cd "$pack/debs" && apt-get "${apt_options[@]}" download libvulkan1 libglvnd0 vulkan-validationlayers)

exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.device/' "$exclude" 2>/dev/null || echo '/.device/' >>"$exclude"
du -sh "$pack"
echo "device-pack: ready; carry .device and run: bash cmake/device-check.sh STEP... (--help lists them)"
