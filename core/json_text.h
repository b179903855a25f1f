// Parsing JSON text from users into nlohmann::json without letting nlohmann's exceptions or a
// hostile shape through: every reader of user JSON (scenarios, sweeps, plans, price imports, model
// files) parses through here, so each refuses the same things with located messages.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace fleetcast::json_text {

/// The deepest nesting of arrays and objects a document may have. Real documents nest a few
/// levels; a bound keeps the recursive parts of nlohmann (copy, dump, compare) off the end of the
/// stack.
inline constexpr std::size_t kMaxDepth = 64;

/// Why a text was refused: where (a JSON pointer such as "/workloads/0/seed", "" for the whole
/// document, or "line L, column C" for a syntax error) and what was expected.
struct JsonTextError {
  std::string location;
  std::string message;
  /// "location: message", or the message alone when there is no location.
  [[nodiscard]] std::string to_string() const;
};

/// The document, or the first reason it is refused: a syntax error, a number outside the range of
/// a double (1e400), nesting deeper than kMaxDepth. Never throws.
std::variant<nlohmann::json, JsonTextError> parse(std::string_view text);

/// "/a/b" + "c" -> "/a/b/c", escaping '~' and '/' as RFC 6901 requires.
std::string child_pointer(std::string_view pointer, std::string_view key);

/// A message for an nlohmann exception met while reading a parsed document (a type or range
/// error the reader did not foresee): nlohmann's own words without its "[json.exception...]"
/// prefix, for a caller that names the file and what it was reading.
std::string describe_exception(const nlohmann::json::exception& error);

}  // namespace fleetcast::json_text
