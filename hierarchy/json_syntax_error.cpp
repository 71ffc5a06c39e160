#include "json_syntax_error.h"

#include <algorithm>

namespace tprop {

std::string json_line_column(std::string_view text, size_t byte) {
  const size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < index; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(index - line_start + 1);
}

std::string strip_nlohmann_prefix(std::string message) {
  if (message.rfind("[json.exception.", 0) == 0) {
    const size_t close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
  }
  if (message.rfind("parse error", 0) == 0) {
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) message.erase(0, colon + 2);
  }
  return message;
}

std::string malformed_json_message(const std::string& source, std::string_view text, size_t byte,
                                   const std::string& nlohmann_what) {
  return source + ":" + json_line_column(text, byte) +
         ": malformed JSON: " + strip_nlohmann_prefix(nlohmann_what);
}

}  // namespace tprop
