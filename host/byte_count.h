// Byte counts on the tools' command lines (--max-buffer-bytes of tprop run/render and
// tprop_bench, tprop_bench's --ceiling-bytes): a whole number with an optional K, M or G suffix
// (powers of 1024). One parser, so the tools accept the same spellings and say the same thing
// about a bad one.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "propagator.h"
#include "result.h"

namespace tprop {

// `value` as a byte count that is a multiple of `multiple` from `least` to `most`; else an error
// that says "`option` needs `rule`" and what was given.
inline Result<uint64_t> parse_byte_count(const std::optional<std::string>& value,
                                         const char* option, const char* rule, uint64_t least,
                                         uint64_t most, uint64_t multiple = 1) {
  const Error bad{std::string(option) + " needs " + rule +
                  " (K, M and G suffixes: powers of 1024), got '" + value.value_or("") + "'"};
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
      n * unit < least || n * unit > most || (n * unit) % multiple != 0)
    return bad;
  return n * unit;
}

// --max-buffer-bytes: at least PropagatorOptions' kMinBufferBytes.
inline Result<uint64_t> parse_buffer_bytes(const std::optional<std::string>& value) {
  return parse_byte_count(value, "--max-buffer-bytes", "a byte count of at least 16K",
                          kMinBufferBytes, UINT64_MAX);
}

}  // namespace tprop
