// --max-buffer-bytes of the tools (tprop run/render, tprop_bench): a byte count with an optional
// K, M or G suffix (powers of 1024), at least PropagatorOptions' kMinBufferBytes. One parser, so
// the tools accept the same spellings and say the same thing about a bad one.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "propagator.h"
#include "result.h"

namespace tprop {

inline Result<uint64_t> parse_buffer_bytes(const std::optional<std::string>& value) {
  const Error bad{"--max-buffer-bytes needs a byte count of at least 16K (K, M and G suffixes: "
                  "powers of 1024), got '" + value.value_or("") + "'"};
  if (!value || value->empty()) return bad;
  std::string digits = *value;
  uint64_t unit = 1;
  switch (digits.back()) {
    case 'k': case 'K': unit = uint64_t(1) << 10; break;
    case 'm': case 'M': unit = uint64_t(1) << 20; break;
    case 'g': case 'G': unit = uint64_t(1) << 30; break;
    default: break;
  }
  if (unit != 1) digits.pop_back();
  uint64_t n = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, n);
  if (digits.empty() || ec != std::errc() || ptr != end || n > UINT64_MAX / unit ||
      n * unit < kMinBufferBytes)
    return bad;
  return n * unit;
}

}  // namespace tprop
