#include "core/json_text.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <vector>

namespace fleetcast::json_text {

using nlohmann::json;

namespace {

/// "line L, column C" of a byte offset in `text` (nlohmann reports the offset one past the error).
std::string line_and_column(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i + 1 < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// A SAX handler that builds the document with nlohmann's own DOM builder while it keeps the JSON
/// pointer of the value being read, so that a number out of range or a too deep nesting is
/// reported where it is, and parsing stops there instead of throwing.
class BoundedBuilder {
 public:
  BoundedBuilder(std::string_view text, json& result) : text_(text), builder_(result, /*allow_exceptions=*/false) {}

  [[nodiscard]] const std::optional<JsonTextError>& error() const { return error_; }

  bool null() { return value() && builder_.null(); }
  bool boolean(bool x) { return value() && builder_.boolean(x); }
  bool number_integer(json::number_integer_t x) { return value() && builder_.number_integer(x); }
  bool number_unsigned(json::number_unsigned_t x) { return value() && builder_.number_unsigned(x); }
  bool number_float(json::number_float_t x, const json::string_t& s) { return value() && builder_.number_float(x, s); }
  bool string(json::string_t& x) { return value() && no_nul(x, pointer(/*pending=*/false)) && builder_.string(x); }
  bool binary(json::binary_t& x) { return value() && builder_.binary(x); }
  bool key(json::string_t& x) {
    frames_.back().key = x;
    if (x.find('\0') != json::string_t::npos) {
      std::string shown = x;
      for (std::size_t at = shown.find('\0'); at != std::string::npos; at = shown.find('\0', at)) shown.replace(at, 1, "\\u0000");
      frames_.back().key = shown;  // the member named as the file writes it
    }
    if (!no_nul(x, pointer(/*pending=*/true))) return false;
    if (!frames_.back().keys.insert(x).second) {
      error_ = JsonTextError{pointer(/*pending=*/true), "member \"" + x + "\" appears twice in one object; expected each "
                                                        "member once (a later one would silently replace the first)"};
      return false;
    }
    return builder_.key(x);
  }
  bool start_object(std::size_t elements) { return open(false) && builder_.start_object(elements); }
  bool end_object() { return close() && builder_.end_object(); }
  bool start_array(std::size_t elements) { return open(true) && builder_.start_array(elements); }
  bool end_array() { return close() && builder_.end_array(); }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& error) {
    if (error.id == 406) {  // a number outside the range of a double
      error_ = JsonTextError{pointer(/*pending=*/true),
                             "number " + token + " is out of range; expected a number between -1.8e308 and 1.8e308"};
    } else {
      std::string what = error.what();
      // nlohmann's text is "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
      const auto detail = what.find(": ", what.find("parse error"));
      error_ = JsonTextError{line_and_column(text_, position),
                             "invalid JSON: " + (detail == std::string::npos ? what : what.substr(detail + 2))};
    }
    return false;
  }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t elements = 0;  // array elements begun so far
    std::string key;           // the member being read, in an object
    std::set<std::string> keys;  // the members read so far, in an object
  };

  /// A string or member name holding U+0000 is refused: a file name would be cut at it when the
  /// file is opened (and no name, region or unit has one).
  bool no_nul(const json::string_t& x, const std::string& where) {
    if (x.find('\0') == json::string_t::npos) return true;
    error_ = JsonTextError{where, "a string holding the character U+0000 (\\u0000); expected text without it"};
    return false;
  }

  /// Counts a value begun in the enclosing array.
  bool value() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().elements;
    return true;
  }

  bool open(bool is_array) {
    value();
    if (frames_.size() >= kMaxDepth) {
      error_ = JsonTextError{pointer(/*pending=*/false), "nested more than " + std::to_string(kMaxDepth) +
                                                             " levels deep; expected at most " +
                                                             std::to_string(kMaxDepth) + " levels of arrays and objects"};
      return false;
    }
    frames_.push_back(Frame{is_array, 0, {}, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  /// The pointer of the value being read: the innermost array's element in progress is the next
  /// one when `pending` (its value has not been announced yet), else the last one begun.
  [[nodiscard]] std::string pointer(bool pending) const {
    std::string result;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      if (!frame.is_array) {
        result = child_pointer(result, frame.key);
      } else {
        const bool innermost = i + 1 == frames_.size();
        const std::size_t index = pending && innermost ? frame.elements : frame.elements - 1;
        result = child_pointer(result, std::to_string(index));
      }
    }
    return result;
  }

  std::string_view text_;
  nlohmann::detail::json_sax_dom_parser<json> builder_;
  std::vector<Frame> frames_;
  std::optional<JsonTextError> error_;
};

}  // namespace

std::string JsonTextError::to_string() const { return location.empty() ? message : location + ": " + message; }

std::variant<json, JsonTextError> parse(std::string_view text) {
  json document;
  BoundedBuilder builder(text, document);
  try {
    if (json::sax_parse(text, &builder) && !builder.error()) return document;
  } catch (const json::exception& error) {
    // The SAX parser reports its errors to the handler; this is a safety net for any other.
    return JsonTextError{"", "invalid JSON: " + describe_exception(error)};
  }
  if (builder.error()) return *builder.error();
  return JsonTextError{"", "invalid JSON"};
}

std::string describe_exception(const json::exception& error) {
  std::string what = error.what();
  // "[json.exception.type_error.302] type must be string, but is number" -> after the bracket.
  if (const auto end = what.find("] "); what.starts_with("[json.exception.") && end != std::string::npos) {
    what.erase(0, end + 2);
  }
  return what;
}

std::string child_pointer(std::string_view pointer, std::string_view key) {
  std::string result(pointer);
  result += '/';
  for (const char c : key) {
    if (c == '~') {
      result += "~0";
    } else if (c == '/') {
      result += "~1";
    } else {
      result += c;
    }
  }
  return result;
}

}  // namespace fleetcast::json_text
