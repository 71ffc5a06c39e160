#include "bench_options.h"

#include <charconv>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "bench_scenes.h"
#include "byte_count.h"
#include "output_layout_arg.h"
#include "scene_generators.h"
#include "scene_layout.h"

namespace tprop::bench {

const char* const kUsage =
    "usage: tprop_bench [--sizes LIST] [--scenes LIST] [--seed N] [--validate] [--json]\n"
    "                   [--device NAME|INDEX] [--narrow-walk WALK] [--level-passes P]\n"
    "                   [--scan-runs S] [--climb-top C] [--climb-levels N]\n"
    "                   [--climb-level-work N] [--wide-stores W] [--world-writes W]\n"
    "                   [--addressing A] [--value-writes V] [--slot-order S]\n"
    "                   [--max-buffer-bytes B] [--general-shaders] [--no-subgroup-chains]\n"
    "                   [--output-layout 4x4|3x4] [--warm-gpu MS] [--ceiling-bytes B]\n"
    "                   [--host-floor-bytes B]\n"
    "                   [--repeat N] [--frames LIST] [--memory] [SPEC...]\n"
    "       tprop_bench --help\n"
    "\n"
    "The scoreboard of tprop's GPU path. For every scene it runs a full first frame, a frame\n"
    "with nothing changed, one with 1% of the values changed and one with all of them changed;\n"
    "forests and the mixed scene also get structural frames (1,000 spawned + 1,000 despawned,\n"
    "100 re-parents, both in one frame, a subtree of about 10% moved under another parent).\n"
    "Per frame: the host time of Propagator::update, the bytes uploaded, the dispatches, the\n"
    "GPU time per stage, the effective GB/s of the bytes the frame must move (README,\n"
    "Performance), and the same scene computed by a plain single-thread C++ loop in this\n"
    "process, with the GPU time as a ratio of the loop's.\n"
    "\n"
    "  --sizes LIST    entities per scene, comma-separated, with k or M suffixes\n"
    "                  (default 100k,1M; 10M takes seconds per frame on lavapipe)\n"
    "  --scenes LIST   scene kinds, comma-separated, from flat, forest4, forest32, chain, mixed\n"
    "                  (default all): gen:flat:N, gen:forest:N:4, gen:forest:N:32, gen:chain:N,\n"
    "                  gen:mixed:N\n"
    "  SPEC...         generator specs (gen:forest:250000:8, ...) run instead of the kinds and\n"
    "                  sizes; structural frames when the scene has more than one level\n"
    "  --seed N        seed of the scenes and of every frame's edits (default 1)\n"
    "  --validate      compare every frame, and the loop, against the CPU reference\n"
    "                  (hierarchy/compare.h tolerance); a mismatch ends with exit status 1\n"
    "  --json          one JSON document on stdout with every figure\n"
    "  --device D      the Vulkan device by index or name part (default: TPROP_DEVICE, else\n"
    "                  the first discrete GPU, then integrated, virtual, CPU)\n"
    "  --narrow-walk W how runs of narrow levels are evaluated: auto (default), workgroup,\n"
    "                  single (one invocation) or jump (pointer jumping; PropagatorOptions)\n"
    "  --level-passes P  the levels neither walked nor jumped: auto (default: separate),\n"
    "                  separate (a dispatch each) or fused (one dispatch, chunks taken in level\n"
    "                  order; PropagatorOptions::level_passes)\n"
    "  --wide-stores W how wide level passes write LocalToWorld: auto (default: shared on\n"
    "                  GPUs), shared (through shared memory where a workgroup's slots are\n"
    "                  consecutive) or direct (PropagatorOptions::wide_stores)\n"
    "  --world-writes W how every pass stores a LocalToWorld: auto (default: words on a CPU\n"
    "                  device), words (64-bit, two floats each) or vectors (4-float columns;\n"
    "                  PropagatorOptions::world_writes)\n"
    "  --slot-order S  whether levels of 65,536 entries and more are put back in slot order\n"
    "                  once structural edits scattered a thirty-second of them: auto\n"
    "                  (default: on a CPU device), restore or keep\n"
    "                  (PropagatorOptions::slot_order)\n"
    "  --scan-runs S   deep runs of aligned levels (chains, parallel chains): auto (default:\n"
    "                  where runs are jumped), always (scanned wherever the device allows) or\n"
    "                  never (PropagatorOptions::scan_runs)\n"
    "  --climb-top C   the top levels (from the roots, within the two limits below) in one\n"
    "                  dispatch, each entity composing its ancestors' matrices: auto\n"
    "                  (default: on GPUs), always or never (PropagatorOptions::climb_top)\n"
    "  --climb-levels N  the most top levels one climb takes, 2 to 16 (default 16)\n"
    "  --climb-level-work N  the most ancestor steps (entities times depth) one level may add\n"
    "                  to the climb, k and M allowed (default 524288)\n"
    "  --addressing A  how the passes reach the arrays: auto (default: descriptors where every\n"
    "                  array fits one binding, else buffer device addresses; on a CPU device\n"
    "                  the evaluate passes read what they never write through texel buffers\n"
    "                  where those fit, with either), texels (those on any device),\n"
    "                  descriptors (storage buffers only), addresses (buffer device addresses\n"
    "                  always, no texels) or address-texels (addresses, with the texel reads);\n"
    "                  PropagatorOptions::prefer_descriptors, texel_reads\n"
    "  --value-writes V  how plain value changes reach the GPU: auto (default: in-place for\n"
    "                  frames changing a quarter of the slots or more where device memory is\n"
    "                  host memory, an integrated GPU or a CPU device), staged (records copied\n"
    "                  and scattered) or in-place (written by update() into the arrays, where\n"
    "                  the device allows; PropagatorOptions::value_writes)\n"
    "  --max-buffer-bytes B  the largest buffer, with K, M or G (powers of 1024): arrays\n"
    "                  beyond it are split into pieces (default: the device's limit)\n"
    "  --output-layout L  4x4 (default: a float4x4 LocalToWorld, 64 bytes an entity) or 3x4\n"
    "                  (its three affine rows, 48 bytes; PropagatorOptions::output_layout);\n"
    "                  GB/s counts the bytes written in that layout\n"
    "  --warm-gpu MS   before each frame, keep the GPU busy with fills for MS milliseconds\n"
    "                  (not in the frame's times), so that it runs at a busy GPU's clocks, not\n"
    "                  an idle one's (default 0; 200 or more on a GPU that idled); the copy\n"
    "                  ceiling is measured after as long a warm-up\n"
    "  --ceiling-bytes B  the size of the buffer the copy ceiling copies, whole MiB from 1M\n"
    "                  to 4G, K, M or G (default 256M, 32M on a CPU device: beyond the\n"
    "                  caches; a smaller copy measures them, and runs sooner)\n"
    "  --host-floor-bytes B  the host memory the host floor's random lines are spread over,\n"
    "                  whole MiB from 4M to 4G, K, M or G (default 256M: about what a million\n"
    "                  entities' host arrays span; on a VM the figure grows with it)\n"
    "  --repeat N      every frame but the full one N times in a row, each with a fresh edit\n"
    "                  of its kind (default 1; 1 to 100); then per frame kind the median, least\n"
    "                  and most update time, and the median GPU time and gpu/loop ratio\n"
    "  --frames LIST   only these frames after the full one, comma-separated, from steady,\n"
    "                  values_1pct, values_all, spawn_despawn, reparent, churn, subtree_move\n"
    "                  (default all; the structural ones on structural scenes only), to time\n"
    "                  or profile one kind of frame\n"
    "  --memory        instead of frames, what one entity costs: the resident memory (RSS)\n"
    "                  that the store, a depth order and a Propagator with its first frame\n"
    "                  add, and the Propagator's device and staging buffers, counted\n"
    "  --general-shaders  every pass with every rule compiled in, not specialized to what the\n"
    "                  scene holds (PropagatorOptions::specialize = false), for comparison\n"
    "  --no-subgroup-chains  the single-invocation walk takes chains too\n"
    "                  (PropagatorOptions::subgroup_chains = false), for comparison\n"
    "\n"
    "Exit status: 0 ok, 1 a bad spec, no device, a runtime failure or a --validate mismatch,\n"
    "2 usage error.\n";

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Result<uint64_t> parse_seed(const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || text[0] == '-' || ec != std::errc() || ptr != end)
    return Error{"--seed must be a whole number from 0 to 2^64-1, not '" + text + "'"};
  return value;
}

// The option's value `text` (or the error of reading it) as a whole number from `least` to
// `most`, into `field`; else `rule` and the text given.
Status read_number(const Result<std::string>& text, uint32_t least, uint32_t most,
                   const char* rule, uint32_t& field) {
  if (!text) return text.error();
  uint32_t n = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, n);
  if (text->empty() || ec != std::errc() || ptr != end || n < least || n > most)
    return Error{std::string(rule) + ", not '" + *text + "'"};
  field = n;
  return ok_status();
}

// The option's value `text` (or the error of reading it) as one of `choices`, into `field`; else
// an error naming the option and what it takes.
template <typename T>
Status choose(const std::string& option, const Result<std::string>& text, T& field,
              std::initializer_list<std::pair<const char*, T>> choices) {
  if (!text) return text.error();
  std::string names;
  size_t k = 0;
  for (const auto& [name, value] : choices) {
    if (*text == name) {
      field = value;
      return ok_status();
    }
    names += (k == 0 ? "" : k + 1 == choices.size() ? " or " : ", ") + std::string(name);
    ++k;
  }
  return Error{option + ": '" + *text + "' is not " + names};
}

}  // namespace

Result<uint64_t> parse_count(const std::string& text) {
  std::string_view digits = text;
  uint64_t unit = 1;
  if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) unit = 1000;
  if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M')) unit = 1000000;
  if (unit != 1) digits.remove_suffix(1);
  uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  const bool digits_only =
      !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits_only || ec != std::errc() || ptr != end || value == 0 ||
      value > kMaxGeneratedEntities / unit) {
    return Error{"a size must be a whole number of entities from 1 to 100M (k and M suffixes "
                 "allowed), not '" + text + "'"};
  }
  return value * unit;
}

Result<BenchOptions> parse_bench_args(const std::vector<std::string>& args) {
  BenchOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= args.size()) return Error{a + " needs a value"};
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--validate") {
      o.validate = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--sizes") {
      auto v = value();
      if (!v) return v.error();
      for (const std::string& item : split_list(*v)) {
        auto n = parse_count(item);
        if (!n) return Error{"--sizes: " + n.error().message};
        o.sizes.push_back(*n);
      }
    } else if (a == "--scenes") {
      auto v = value();
      if (!v) return v.error();
      for (const std::string& item : split_list(*v)) {
        if (!find_scene_kind(item))
          return Error{"--scenes: unknown scene kind '" + item + "' (" + scene_kind_names() + ")"};
        o.scenes.push_back(item);
      }
    } else if (a == "--seed") {
      auto v = value();
      if (!v) return v.error();
      auto seed = parse_seed(*v);
      if (!seed) return seed.error();
      o.seed = *seed;
    } else if (a == "--device") {
      auto v = value();
      if (!v) return v.error();
      o.device = *v;
    } else if (a == "--narrow-walk") {
      const Status st = choose(a, value(), o.propagator.narrow_walk,
                               {{"auto", NarrowWalk::Auto},
                                {"workgroup", NarrowWalk::Workgroup},
                                {"single", NarrowWalk::SingleInvocation},
                                {"jump", NarrowWalk::Jump}});
      if (!st) return st.error();
    } else if (a == "--warm-gpu") {
      const Status st = read_number(value(), 0, 10000,
                                    "--warm-gpu must be a number of milliseconds from 0 to 10000",
                                    o.warm_gpu_ms);
      if (!st) return st.error();
    } else if (a == "--repeat") {
      const Status st = read_number(value(), 1, 100,
                                    "--repeat must be a number of runs from 1 to 100", o.repeat);
      if (!st) return st.error();
    } else if (a == "--frames") {
      auto v = value();
      if (!v) return v.error();
      for (const std::string& item : split_list(*v)) {
        const std::optional<FrameKind> kind = frame_kind_named(item);
        if (!kind || *kind == FrameKind::Full)
          return Error{"--frames: '" + item +
                       "' is not steady, values_1pct, values_all, spawn_despawn, reparent, "
                       "churn or subtree_move (the full frame always runs)"};
        o.frames.push_back(*kind);
      }
    } else if (a == "--level-passes") {
      const Status st = choose(a, value(), o.propagator.level_passes,
                               {{"auto", LevelPasses::Auto},
                                {"separate", LevelPasses::Separate},
                                {"fused", LevelPasses::Fused}});
      if (!st) return st.error();
    } else if (a == "--wide-stores") {
      const Status st = choose(a, value(), o.propagator.wide_stores,
                               {{"auto", WideStores::Auto},
                                {"shared", WideStores::Shared},
                                {"direct", WideStores::Direct}});
      if (!st) return st.error();
    } else if (a == "--world-writes") {
      const Status st = choose(a, value(), o.propagator.world_writes,
                               {{"auto", WorldWrites::Auto},
                                {"words", WorldWrites::Words},
                                {"vectors", WorldWrites::Vectors}});
      if (!st) return st.error();
    } else if (a == "--slot-order") {
      const Status st = choose(a, value(), o.propagator.slot_order,
                               {{"auto", SlotOrder::Auto},
                                {"restore", SlotOrder::Restore},
                                {"keep", SlotOrder::Keep}});
      if (!st) return st.error();
    } else if (a == "--scan-runs") {
      const Status st = choose(a, value(), o.propagator.scan_runs,
                               {{"auto", ScanRuns::Auto},
                                {"always", ScanRuns::Always},
                                {"never", ScanRuns::Never}});
      if (!st) return st.error();
    } else if (a == "--climb-top") {
      const Status st = choose(a, value(), o.propagator.climb_top,
                               {{"auto", ClimbTop::Auto},
                                {"always", ClimbTop::Always},
                                {"never", ClimbTop::Never}});
      if (!st) return st.error();
    } else if (a == "--climb-levels") {
      const Status st = read_number(value(), 2, gpu::kClimbLevelsMax,
                                    "--climb-levels must be a number of levels from 2 to 16",
                                    o.propagator.climb_levels);
      if (!st) return st.error();
    } else if (a == "--climb-level-work") {
      auto v = value();
      if (!v) return v.error();
      auto n = parse_count(*v);
      if (!n) return Error{"--climb-level-work: " + n.error().message};
      o.propagator.climb_level_work = static_cast<uint32_t>(*n);
    } else if (a == "--value-writes") {
      const Status st = choose(a, value(), o.propagator.value_writes,
                               {{"auto", ValueWrites::Auto},
                                {"staged", ValueWrites::Staged},
                                {"in-place", ValueWrites::InPlace}});
      if (!st) return st.error();
    } else if (a == "--general-shaders") {
      o.propagator.specialize = false;
    } else if (a == "--no-subgroup-chains") {
      o.propagator.subgroup_chains = false;
    } else if (a == "--memory") {
      o.memory = true;
    } else if (a == "--ceiling-bytes" || a == "--host-floor-bytes") {
      // Whole MiB up to 4G: from 1M for the copy, from 4M for the host floor's lines.
      const bool ceiling = a == "--ceiling-bytes";
      auto v = value();
      if (!v) return v.error();
      Result<uint64_t> bytes = parse_byte_count(
          *v, a.c_str(),
          ceiling ? "a whole number of MiB from 1M to 4G" : "a whole number of MiB from 4M to 4G",
          uint64_t(ceiling ? 1 : 4) << 20, uint64_t(4) << 30, uint64_t(1) << 20);
      if (!bytes) return bytes.error();
      (ceiling ? o.ceiling_bytes : o.host_floor_bytes) = *bytes;
    } else if (a == "--max-buffer-bytes") {
      auto v = value();
      if (!v) return v.error();
      Result<uint64_t> bytes = parse_buffer_bytes(*v);
      if (!bytes) return bytes.error();
      o.propagator.max_buffer_bytes = *bytes;
    } else if (a == "--output-layout") {
      auto v = value();
      if (!v) return v.error();
      Result<OutputLayout> layout = parse_output_layout(*v);
      if (!layout) return layout.error();
      o.propagator.output_layout = *layout;
    } else if (a == "--addressing") {
      auto v = value();
      if (!v) return v.error();
      const bool address_texels = *v == "address-texels";
      o.propagator.prefer_descriptors = *v != "addresses" && !address_texels;
      o.propagator.texel_reads = *v == "auto"                       ? TexelReads::Auto
                                 : *v == "texels" || address_texels ? TexelReads::Always
                                                                    : TexelReads::Never;
      if (*v != "auto" && *v != "texels" && *v != "descriptors" && *v != "addresses" &&
          !address_texels)
        return Error{"--addressing: '" + *v +
                     "' is not auto, texels, descriptors, addresses or address-texels"};
    } else if (a.starts_with("-")) {
      return Error{"unknown option '" + a + "'"};
    } else {
      o.specs.push_back(a);
    }
  }
  if (o.memory && o.repeat > 1)
    return Error{"--repeat runs frames again, and --memory runs none: give one or the other"};
  if (o.memory && !o.frames.empty())
    return Error{"--frames chooses frames, and --memory runs none: give one or the other"};
  if (!o.specs.empty() && (!o.sizes.empty() || !o.scenes.empty()))
    return Error{"SPECs replace --sizes and --scenes; give one or the other"};
  if (o.sizes.empty()) o.sizes = {100'000, 1'000'000};
  if (o.scenes.empty())
    for (const SceneKind& kind : scene_kinds()) o.scenes.push_back(kind.name);
  return o;
}

}  // namespace tprop::bench
