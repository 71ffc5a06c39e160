#include "gltf_buffers.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>

namespace tprop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_base64_char(char c) {
  return is_ascii_alpha(c) || is_ascii_digit(c) || c == '+' || c == '/';
}

bool starts_with_ignoring_case(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const char a = s[i] >= 'A' && s[i] <= 'Z' ? char(s[i] - 'A' + 'a') : s[i];
    if (a != prefix[i]) return false;
  }
  return true;
}

// The uri as messages show it: quoted, control bytes as '?', cut after 80 bytes (a hostile file
// must not fill the terminal).
std::string shown(std::string_view uri) {
  constexpr size_t kShown = 80;
  std::string out = "\"";
  for (size_t i = 0; i < uri.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(uri[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : char(c);
  }
  if (uri.size() > kShown) out += "...";
  return out + "\"";
}

// RFC 3986: a scheme is a letter followed by letters, digits, '+', '-', '.', then ':'.
bool has_scheme(std::string_view uri) {
  if (uri.empty() || !is_ascii_alpha(uri[0])) return false;
  for (size_t i = 1; i < uri.size(); ++i) {
    const char c = uri[i];
    if (c == ':') return true;
    if (!(is_ascii_alpha(c) || is_ascii_digit(c) || c == '+' || c == '-' || c == '.')) return false;
  }
  return false;
}

int hex_value(char c) {
  if (is_ascii_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes decoded, as glTF's URIs are (RFC 3986; '+' stays a '+').
Result<std::string> percent_decoded(std::string_view uri) {
  std::string out;
  for (size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] != '%') {
      out += uri[i];
      continue;
    }
    const int hi = i + 2 < uri.size() ? hex_value(uri[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_value(uri[i + 2]) : -1;
    if (lo < 0)
      return Error{"a '%' at byte " + std::to_string(i) + " not followed by two hex digits"};
    if (hi == 0 && lo == 0) return Error{"an escaped NUL byte (%00)"};
    out += char(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// The decoded length of a data URI's base64 text, counted without decoding. `offset` is where
// the text starts in the uri, for the message.
Result<uint64_t> base64_decoded_length(std::string_view text, size_t offset) {
  size_t n = text.size();
  size_t padding = 0;
  while (padding < 2 && n > 0 && text[n - 1] == '=') {
    --n;
    ++padding;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!is_base64_char(text[i]))
      return Error{"that is not valid base64: byte " + std::to_string(offset + i) +
                   " of the uri is not a base64 character"};
  }
  if (n % 4 == 1 || (padding > 0 && (n + padding) % 4 != 0))
    return Error{"that is not valid base64: its " + std::to_string(text.size()) +
                 " characters are not whole base64 groups"};
  return uint64_t(n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1));
}

Status check_data_uri(std::string_view uri, uint64_t byte_length) {
  const size_t comma = uri.find(',');
  if (comma == std::string_view::npos) return Error{"a data URI without the ',' before its data"};
  const std::string_view header = uri.substr(0, comma);
  if (header.size() < 7 || !starts_with_ignoring_case(header.substr(header.size() - 7), ";base64"))
    return Error{"a data URI that is not base64 (only \";base64,\" data is read)"};
  Result<uint64_t> length = base64_decoded_length(uri.substr(comma + 1), comma + 1);
  if (!length) return Error{"a data URI " + length.error().message};
  if (*length != byte_length) {
    return Error{"a data URI of " + std::to_string(*length) + " bytes, but byteLength says " +
                 std::to_string(byte_length)};
  }
  return ok_status();
}

bool is_inside(const fs::path& folder, const fs::path& target) {
  return std::mismatch(folder.begin(), folder.end(), target.begin(), target.end()).first ==
         folder.end();
}

Status check_file_uri(std::string_view uri, const std::string& gltf_path, uint64_t byte_length) {
  const std::string refused = "only a relative path inside the glTF file's folder is read";
  if (has_scheme(uri)) {
    return Error{"a URI with the scheme \"" + std::string(uri.substr(0, uri.find(':'))) +
                 ":\" is refused: " + refused};
  }
  Result<std::string> decoded = percent_decoded(uri);
  if (!decoded) return Error{"a malformed URI: " + decoded.error().message};
  if (decoded->empty()) return Error{"an empty uri"};
  if (fs::path(*decoded).is_absolute()) return Error{"an absolute path is refused: " + refused};

  std::error_code ec;
  fs::path folder = fs::path(gltf_path).parent_path();
  if (folder.empty()) folder = ".";
  const fs::path root = fs::canonical(folder, ec);
  if (ec) return Error{"cannot resolve the glTF file's folder: " + ec.message()};
  // Resolves `..` and every symlink of the part that exists, as opening the file would.
  const fs::path target = fs::weakly_canonical(root / *decoded, ec).lexically_normal();
  if (ec) return Error{"cannot resolve the path: " + ec.message()};
  if (!is_inside(root, target))
    return Error{"a path that leads outside the glTF file's folder is refused: " + refused};

  const fs::file_status st = fs::status(target, ec);
  if (ec || !fs::exists(st)) return Error{"no such file in the glTF file's folder"};
  if (!fs::is_regular_file(st)) return Error{"not a regular file"};
  const uintmax_t size = fs::file_size(target, ec);
  if (ec) return Error{"cannot read its size: " + ec.message()};
  if (size != byte_length) {
    return Error{"a file of " + std::to_string(size) + " bytes, but byteLength says " +
                 std::to_string(byte_length)};
  }
  return ok_status();
}

}  // namespace

Status check_gltf_buffers(const json& doc, const std::string& gltf_path,
                          std::optional<uint64_t> glb_bin_bytes) {
  const auto buffers = doc.find("buffers");
  if (buffers == doc.end()) return ok_status();
  if (!buffers->is_array()) return Error{"buffers must be an array"};
  for (size_t i = 0; i < buffers->size(); ++i) {
    const json& buffer = (*buffers)[i];
    const std::string where = "buffers[" + std::to_string(i) + "]";
    if (!buffer.is_object()) return Error{where + " must be an object"};
    const auto length = buffer.find("byteLength");
    if (length == buffer.end() || !length->is_number_unsigned() || length->get<uint64_t>() == 0)
      return Error{where + ".byteLength must be an integer of at least 1"};
    const uint64_t byte_length = length->get<uint64_t>();

    const auto uri = buffer.find("uri");
    if (uri == buffer.end()) {
      if (!glb_bin_bytes) {
        return Error{where + " has no uri and there is no .glb BIN chunk to hold it"};
      }
      if (byte_length > *glb_bin_bytes) {
        return Error{where + ".byteLength is " + std::to_string(byte_length) + ", more than the " +
                     std::to_string(*glb_bin_bytes) + " bytes of the .glb BIN chunk"};
      }
      continue;
    }
    if (!uri->is_string()) return Error{where + ".uri must be a string"};
    const std::string& text = uri->get_ref<const std::string&>();
    if (starts_with_ignoring_case(text, "data:")) {
      if (Status s = check_data_uri(text, byte_length); !s)
        return Error{where + ".uri is " + s.error().message};
    } else if (Status s = check_file_uri(text, gltf_path, byte_length); !s) {
      return Error{where + ".uri " + shown(text) + ": " + s.error().message};
    }
  }
  return ok_status();
}

}  // namespace tprop
