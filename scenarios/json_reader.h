// Typed, located reading of a JSON document for validation: every read records the key as known,
// checks the type and range, and reports a mistake as a Diagnostic at the value's JSON pointer,
// so one pass over a document finds every mistake, not just the first.
//
// Thread-safety: a JsonReader and its ObjectReaders belong to one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleetcast/scenario.h"
#include "fleetcast/time.h"

namespace fleetcast::scenarios {

/// Collects diagnostics for one file.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(std::move(file)) {}
  void error(std::string location, std::string message);
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::vector<Diagnostic>& diagnostics() { return diagnostics_; }
  [[nodiscard]] bool empty() const { return diagnostics_.empty(); }

 private:
  std::string file_;
  std::vector<Diagnostic> diagnostics_;
};

/// Parses JSON text (json_text::parse); a syntax error is reported at "line L, column C", a number
/// out of range or a too deep nesting at its pointer, and each gives nullopt.
std::optional<nlohmann::json> parse_json_document(std::string_view text, DiagnosticSink& sink);

/// "/a/b" + "c" -> "/a/b/c", escaping '~' and '/' as RFC 6901 requires.
std::string child_pointer(std::string_view pointer, std::string_view key);
std::string child_pointer(std::string_view pointer, std::size_t index);

/// A short description of a JSON value's type for "found ..." messages: "number 3", "string \"x\"".
std::string describe_value(const nlohmann::json& value);

enum class Presence { required, optional };

/// Reads the fields of one JSON object. On destruction (or finish()), reports every field that is
/// not among `allowed_fields` as unknown, with a "did you mean" suggestion among them.
class ObjectReader {
 public:
  /// `value` must outlive the reader. When it is not an object, reports that once and every read
  /// returns nullopt.
  ObjectReader(DiagnosticSink& sink, const nlohmann::json& value, std::string pointer,
               std::vector<std::string> allowed_fields);
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;
  ~ObjectReader() { finish(); }

  [[nodiscard]] bool is_object() const { return value_.is_object(); }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] bool has(std::string_view key) const;
  /// Reports a problem with a field at its pointer.
  void error(std::string_view key, std::string message) const;

  /// The raw field, or nullptr (reports a missing required field).
  const nlohmann::json* field(std::string_view key, Presence presence);

  std::optional<std::string> string(std::string_view key, Presence presence);
  /// A string that must be one of `choices`.
  std::optional<std::string> choice(std::string_view key, Presence presence, const std::vector<std::string>& choices);
  std::optional<bool> boolean(std::string_view key, Presence presence);
  /// A finite number within [min, max].
  std::optional<double> number(std::string_view key, Presence presence, double min, double max);
  /// A number in (0, max] (strictly positive).
  std::optional<double> positive_number(std::string_view key, Presence presence, double max);
  std::optional<std::int64_t> integer(std::string_view key, Presence presence, std::int64_t min, std::int64_t max);
  /// A percentage: a number in [0, 100].
  std::optional<double> percentage(std::string_view key, Presence presence);
  /// A duration string ("5m"); strictly positive.
  std::optional<Seconds> duration(std::string_view key, Presence presence);
  std::optional<Instant> instant(std::string_view key, Presence presence);
  /// An array of non-empty strings without duplicates (may be empty unless `non_empty`).
  std::optional<std::vector<std::string>> string_array(std::string_view key, Presence presence, bool non_empty);
  /// Calls `each(element, pointer)` for every element of an array field; returns false when the
  /// field is absent or not an array.
  bool array(std::string_view key, Presence presence,
             const std::function<void(const nlohmann::json&, const std::string&)>& each);
  /// Calls `each(key, value, pointer)` for every member of an object-valued field whose member
  /// names are free (a map such as throughput per GPU model).
  bool map(std::string_view key, Presence presence,
           const std::function<void(const std::string&, const nlohmann::json&, const std::string&)>& each);

  /// Reports unread fields now (idempotent).
  void finish();

 private:
  /// The numbers a bounded_number() accepts, and how its errors name them.
  struct NumberRange {
    double min;
    double max;
    bool min_exclusive;    // min itself is out of range
    std::string kind;      // what a non-number was expected to be: "a number"
    std::string expected;  // what a number out of range was expected to be: "a number between 0 and 1"
  };
  /// The field as a finite number within `range`, else nullopt (reporting a wrong type or value).
  std::optional<double> bounded_number(std::string_view key, Presence presence, const NumberRange& range);

  DiagnosticSink& sink_;
  const nlohmann::json& value_;
  std::string pointer_;
  std::vector<std::string> allowed_;
  bool finished_ = false;
};

}  // namespace fleetcast::scenarios
