// What `tprop run` reports: a short human summary on stdout, or the same as one JSON object
// (--json) for scripts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "compare.h"
#include "gpu_timer.h"

namespace tprop::cli {

// --validate's outcome: the GPU against the CPU reference.
struct ValidationReport {
  Comparison comparison;
  uint32_t worst_entity = 0;  // the entity id at comparison.worst_position
  uint32_t max_abs_entity = 0;  // the entity id at comparison.max_abs_position
};

struct RunReport {
  std::string input;
  uint32_t entities = 0;
  uint32_t roots = 0;
  uint32_t levels = 0;
  uint32_t cycles_broken = 0;
  uint32_t entities_on_cycles = 0;
  uint32_t unknown_parents = 0;
  uint64_t statics = 0;
  uint64_t warnings = 0;
  std::string backend;  // "cpu" or "gpu"
  std::string device;   // the Vulkan device name, or "CPU reference"
  std::string fallback; // why auto ran on the CPU (empty otherwise)
  double load_ms = 0;
  double sort_ms = 0;
  double evaluate_ms = 0;  // wall clock of the chosen backend's frame
  std::optional<StageTimes> gpu_times;
  std::optional<ValidationReport> validation;
  std::string dump;  // the dump file, when written
  std::string output_layout;  // GPU path: "4x4" or "3x4"
  double dump_ms = 0;

  // Nanoseconds per entity: the GPU stages' total on the GPU path, else the CPU evaluation.
  double ns_per_entity() const;
};

// The summary, one "label   value" line each.
void print_summary(std::FILE* out, const RunReport& report);
// The same as one JSON object (no trailing newline).
std::string report_json(const RunReport& report);
// The one-line verdict of --validate, e.g. "max error 0.031 of tolerance (abs 2.4e-07) ...".
std::string validation_line(const ValidationReport& v);

}  // namespace tprop::cli
