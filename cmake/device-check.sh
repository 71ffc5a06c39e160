#!/usr/bin/env bash
# The checks and measurements a session runs on a lent GPU machine, prepared so that its few
# minutes go to them (cmake/device-pack.sh packs the binaries and packages into .device/ here;
# the device tool carries that folder). Run from the repository root there:
#
#   bash cmake/device-check.sh STEP...         (device run, carry [".device"])
#   bash cmake/device-check.sh --local STEP... (here, on whatever device Vulkan finds: a dry run)
#
# Steps, each under a time limit of its own, each writing one file to $OUT (the tool brings at
# most 8 back) and a line to $OUT/steps.log (step, exit status, seconds):
#   info        the GPU (nvidia-smi) and the devices tprop sees                      ~5 s
#   tests       gpu_tests with the validation layers (TPROP_REQUIRE_GPU=1)   2 to 3 min
#   validate    tprop_bench --validate at $VALIDATE_SIZES: every frame against the CPU reference
#   bench       the scoreboard: --sizes $SIZES (100k,1M,10M), --repeat 5, --warm-gpu 200, JSON
#   slot-order  1M and 10M forest4 churn, --repeat 60, --slot-order keep then restore, JSON
#               (SlotOrder::Auto keeps on GPUs unmeasured: this is the measurement)
#   world       tprop run gen:dclworld:1000:5:edits=KIND --frames 30 --json for KIND spawn (issue
#               10's frame), move and all, as one JSON object by kind ($WORLD alone when set)
#   100m        gen:forest:100000000:4, full and 1% values frames (generation ~1 min, 60 GB)
# Environment: SIZES, VALIDATE_SIZES (100k,1M), SLOT_SIZES (1M,10M), WORLD (the world spec),
# STEP_SECONDS (a limit for every step instead of each one's own), DRIVER_FILES (the Vulkan
# driver's manifest there: the NVIDIA driver's by default).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit "$1"
}

local_run=0
steps=()
for a in "$@"; do
  case "$a" in
    --local) local_run=1 ;;
    -h | --help) usage 0 ;;
    info | tests | validate | bench | slot-order | world | 100m) steps+=("$a") ;;
    *) echo "device-check: unknown step '$a'" >&2; usage 2 ;;
  esac
done
[ ${#steps[@]} -gt 0 ] || usage 2

bin=.device/bin
[ -x "$bin/tprop_bench" ] || { echo "device-check: $bin is missing: run cmake/device-pack.sh here first" >&2; exit 1; }
out=${OUT:-device-out}
mkdir -p "$out"

if [ "$local_run" = 0 ]; then
  # The loader and libglvnd go to / as the device README says; the validation layers elsewhere
  # (other packages unpacked into / can break it), found through VK_LAYER_PATH.
  for f in .device/debs/libvulkan1_*.deb .device/debs/libglvnd0_*.deb; do dpkg -x "$f" /; done
  ldconfig
  layers=/tmp/tprop-layers
  dpkg -x .device/debs/vulkan-validationlayers_*.deb "$layers"
  export VK_LAYER_PATH=$layers/usr/share/vulkan/explicit_layer.d
  export LD_LIBRARY_PATH=$layers/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export VK_DRIVER_FILES=${DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
fi

sizes=${SIZES:-100k,1M,10M}
slot_sizes=${SLOT_SIZES:-1M,10M}
validate_sizes=${VALIDATE_SIZES:-100k,1M}
world=${WORLD:-}

# step NAME LIMIT_SECONDS OUTPUT_FILE COMMAND...: runs COMMAND with its stdout into the file and
# its stderr into the log, under the limit, and logs how it ended.
step() {
  local name=$1 limit=${STEP_SECONDS:-$2} file=$3
  shift 3
  local start=$SECONDS
  timeout "$limit" "$@" >"$out/$file" 2>>"$out/steps.log"
  local rc=$?
  echo "step $name: exit $rc, $((SECONDS - start)) s (limit $limit s) -> $file" | tee -a "$out/steps.log"
}

# Two bench runs as one JSON object, {"keep": ..., "restore": ...}: one file back, not two.
slot_runs="churn() { $bin/tprop_bench --sizes $slot_sizes --scenes forest4 --frames churn \
  --repeat 60 --warm-gpu 200 --slot-order \$1 --json; }
echo '{\"keep\":' && churn keep && echo ',\"restore\":' && churn restore && echo '}'"

# Issue 10's frame and its kinds of edit apart, {"spawn": ..., "move": ..., "all": ...}.
world_runs="kind() { $bin/tprop run gen:dclworld:1000:5:edits=\$1 --frames 30 --json; }
echo '{\"spawn\":' && kind spawn && echo ',\"move\":' && kind move && echo ',\"all\":' &&
kind all && echo '}'"

for s in "${steps[@]}"; do
  case "$s" in
    info)
      step info 60 info.txt bash -c "nvidia-smi -L 2>&1; uname -a; $bin/tprop devices" ;;
    tests)
      step tests 300 gpu_tests.log env TPROP_REQUIRE_GPU=1 "$bin/gpu_tests" --gtest_brief=1 ;;
    validate)
      step validate 240 validate.json "$bin/tprop_bench" --sizes "$validate_sizes" --validate --json ;;
    bench)
      step bench 420 bench.json "$bin/tprop_bench" --sizes "$sizes" --repeat 5 --warm-gpu 200 --json ;;
    slot-order)
      step slot-order 300 slot-order.json bash -c "$slot_runs" ;;
    world)
      if [ -n "$world" ]; then
        step world 180 world.json "$bin/tprop" run "$world" --frames 30 --json
      else
        step world 180 world.json bash -c "$world_runs"
      fi ;;
    100m)
      step 100m 420 forest100m.json "$bin/tprop_bench" gen:forest:100000000:4 \
        --frames values_1pct --warm-gpu 200 --json ;;
  esac
done
