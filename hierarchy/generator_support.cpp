#include "generator_support.h"

#include <charconv>

namespace tprop {

std::vector<std::string_view> split_spec(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

Error spec_error(std::string_view spec, const std::string& what) {
  return Error{"scene generator '" + std::string(spec) + "': " + what};
}

Result<uint64_t> parse_spec_number(std::string_view spec, std::string_view field,
                                   std::string_view name, uint64_t lo, uint64_t hi) {
  uint64_t value = 0;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value);
  const bool digits_only = !field.empty() && field.find_first_not_of("0123456789") == field.npos;
  if (!digits_only || ec != std::errc() || ptr != end || value < lo || value > hi) {
    return spec_error(spec, std::string(name) + " must be a whole number from " +
                                std::to_string(lo) + " to " + std::to_string(hi) + ", not '" +
                                std::string(field) + "'");
  }
  return value;
}

}  // namespace tprop
