// tprop_bench's output: a text table per scene as the scenes finish, or one JSON document with
// every figure at the end (--json).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench_ceiling.h"
#include "bench_host_memory.h"
#include "bench_frames.h"
#include "bench_options.h"
#include "bench_scenes.h"

namespace tprop::bench {

struct SceneRecord {
  PlannedScene plan;
  uint32_t entities = 0;  // as generated
  uint32_t levels = 0;
  double generate_ms = 0;
  std::vector<FrameRecord> frames;
};

// One frame kind over its --repeat runs: the median, least and most host update time, and the
// medians of the GPU time and of the GPU/loop ratio (over the runs that have them). The median
// of an even count is the mean of the middle two.
struct FrameSummary {
  FrameKind kind = FrameKind::Full;
  uint32_t runs = 0;
  double update_median_ms = 0;
  double update_min_ms = 0;
  double update_max_ms = 0;
  std::optional<double> gpu_median_ms;
  std::optional<double> gpu_over_loop_median;
};

// Per frame kind, in the order the kinds first appear in `frames`.
std::vector<FrameSummary> summarize_runs(const std::vector<FrameRecord>& frames);

// The lines before the first scene: the device, the copy ceiling and the host's memory floor
// (or why there is none) and the byte model.
void print_text_header(std::FILE* out, const std::string& device, OutputLayout layout,
                       const Result<CopyCeiling>& ceiling,
                       const Result<HostMemoryFloor>& host_floor);
// The scene's line, then its table's header.
void print_text_scene(std::FILE* out, const SceneRecord& scene);
// One row of the table, as the frame finishes.
void print_text_frame(std::FILE* out, const FrameRecord& frame);
// After a scene's rows, when a frame kind ran more than once: its FrameSummary lines.
void print_text_summary(std::FILE* out, const SceneRecord& scene);

// Every figure of the run as one JSON document.
std::string json_report(const std::string& device, const BenchOptions& options,
                        const Result<CopyCeiling>& ceiling,
                        const Result<HostMemoryFloor>& host_floor,
                        const std::vector<SceneRecord>& scenes);

}  // namespace tprop::bench
