// Parsing JSON text from users into nlohmann::json without letting nlohmann's exceptions or a
// hostile shape through, and writing JSON without nlohmann's exception on invalid UTF-8: every reader of user JSON (scenarios, sweeps, plans, price imports, model
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
/// a double (1e400), nesting deeper than kMaxDepth, a member twice in one object (RFC 8259 leaves
/// its meaning open; nlohmann would keep the last), a string or member name holding U+0000 (a file
/// name would be cut at it). Never throws.
std::variant<nlohmann::json, JsonTextError> parse(std::string_view text);

/// "/a/b" + "c" -> "/a/b/c", escaping '~' and '/' as RFC 6901 requires.
std::string child_pointer(std::string_view pointer, std::string_view key);

/// A message for an nlohmann exception met while reading a parsed document (a type or range
/// error the reader did not foresee): nlohmann's own words without its "[json.exception...]"
/// prefix, for a caller that names the file and what it was reading.
std::string describe_exception(const nlohmann::json::exception& error);

/// `value` as JSON text (compact when `indent` is -1), never throwing: a string holding invalid
/// UTF-8, which parsed text never yields but a value built in code by an embedder (a scenario or
/// plan with a Latin-1 name) can, is written with U+FFFD in place of the bad bytes. Every JSON the
/// library writes goes through here.
template <class Json>
std::string dump(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace fleetcast::json_text
