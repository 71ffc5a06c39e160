// How a JSON syntax error reads in tprop's messages, the same for every JSON input (scene files,
// glTF): "scene.json:3:12: malformed JSON: syntax error while parsing object - ...".
// nlohmann reports a 1-based byte offset and a message that starts with its own exception id
// and its own idea of the position; people want line:column and the reason alone.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tprop {

// "LINE:COLUMN" (both 1-based) of the byte nlohmann names by its 1-based offset `byte` (the
// last byte it read) in `text`.
std::string json_line_column(std::string_view text, size_t byte);

// nlohmann's what() without "[json.exception.parse_error.101] parse error at line 3, column 4: ".
std::string strip_nlohmann_prefix(std::string message);

// "SOURCE:LINE:COLUMN: malformed JSON: REASON".
std::string malformed_json_message(const std::string& source, std::string_view text, size_t byte,
                                   const std::string& nlohmann_what);

}  // namespace tprop
