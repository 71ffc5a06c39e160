#!/usr/bin/env bash
# Installs every Debian 12 package tprop needs to build, test and run headless, and nothing
# when all of them are already present (a dpkg query, no network). Works as root, or through
# sudo for an ordinary user.
set -euo pipefail

# bsdutils gives script(1), which the progress-bar test uses as a terminal. clang-15 and
# libfuzzer-15-dev build the loaders' fuzz harnesses (cmake/dev.sh test runs them in its
# sanitizer tree); llvm-15 gives llvm-symbolizer, which names functions and lines in its reports.
packages=(
  build-essential cmake ninja-build pkg-config git bsdutils
  libvulkan-dev libvulkan-volk-dev vulkan-validationlayers mesa-vulkan-drivers
  libshaderc-dev glslc
  libglm-dev nlohmann-json3-dev libtinygltf-dev libstb-dev
  googletest libgtest-dev libgmock-dev
  clang-15 libfuzzer-15-dev llvm-15
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "tprop setup: missing packages (${missing[*]}) and neither root nor sudo is available" >&2
  exit 1
fi

echo "tprop setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
