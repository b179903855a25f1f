#include "scenarios/json_reader.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <set>

#include "core/json_text.h"
#include "core/text.h"

namespace fleetcast::scenarios {

using nlohmann::json;

void DiagnosticSink::error(std::string location, std::string message) {
  diagnostics_.push_back(Diagnostic{file_, std::move(location), std::move(message)});
}

std::optional<json> parse_json_document(std::string_view text, DiagnosticSink& sink) {
  auto parsed = json_text::parse(text);
  if (auto* error = std::get_if<json_text::JsonTextError>(&parsed)) {
    sink.error(std::move(error->location), std::move(error->message));
    return std::nullopt;
  }
  return std::move(std::get<json>(parsed));
}

std::string child_pointer(std::string_view pointer, std::string_view key) {
  return json_text::child_pointer(pointer, key);
}

std::string child_pointer(std::string_view pointer, std::size_t index) {
  return std::string(pointer) + "/" + std::to_string(index);
}

std::string describe_value(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number " + json_text::dump(value);
    case json::value_t::string: {
      std::string text = json_text::dump(value);
      if (text.size() > 40) text = text.substr(0, 37) + "...\"";
      return "string " + text;
    }
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a value of another type";
  }
}

ObjectReader::ObjectReader(DiagnosticSink& sink, const json& value, std::string pointer,
                           std::vector<std::string> allowed_fields)
    : sink_(sink), value_(value), pointer_(std::move(pointer)), allowed_(std::move(allowed_fields)) {
  if (!value_.is_object()) {
    sink_.error(pointer_, "expected an object, found " + describe_value(value_));
    finished_ = true;
  }
}

bool ObjectReader::has(std::string_view key) const { return value_.is_object() && value_.contains(key); }

void ObjectReader::error(std::string_view key, std::string message) const {
  sink_.error(child_pointer(pointer_, key), std::move(message));
}

const json* ObjectReader::field(std::string_view key, Presence presence) {
  assert(std::find(allowed_.begin(), allowed_.end(), key) != allowed_.end() && "read of an undeclared field");
  if (!value_.is_object()) return nullptr;
  const auto it = value_.find(key);
  if (it == value_.end()) {
    if (presence == Presence::required) sink_.error(pointer_, "missing required field '" + std::string(key) + "'");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> ObjectReader::string(std::string_view key, Presence presence) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    error(key, "expected a string, found " + describe_value(*value));
    return std::nullopt;
  }
  auto text = value->get<std::string>();
  if (text.empty()) {
    error(key, "expected a non-empty string");
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> ObjectReader::choice(std::string_view key, Presence presence,
                                                const std::vector<std::string>& choices) {
  auto text = string(key, presence);
  if (!text) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *text) == choices.end()) {
    std::string list;
    for (const auto& option : choices) list += (list.empty() ? "'" : ", '") + option + "'";
    error(key, "unknown value '" + *text + "'" + text::did_you_mean(*text, choices) + "; expected one of " + list);
    return std::nullopt;
  }
  return text;
}

std::optional<bool> ObjectReader::boolean(std::string_view key, Presence presence) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    error(key, "expected true or false, found " + describe_value(*value));
    return std::nullopt;
  }
  return value->get<bool>();
}

namespace {

std::string format_number(double x) {
  json j = x;
  if (x == std::floor(x) && std::abs(x) < 1e15) j = static_cast<std::int64_t>(x);
  return json_text::dump(j);
}

}  // namespace

std::optional<double> ObjectReader::bounded_number(std::string_view key, Presence presence, const NumberRange& range) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) {
    error(key, "expected " + range.kind + ", found " + describe_value(*value));
    return std::nullopt;
  }
  const double x = value->get<double>();
  const bool above_min = range.min_exclusive ? x > range.min : x >= range.min;
  if (!std::isfinite(x) || !above_min || x > range.max) {
    error(key, "expected " + range.expected + ", found " + value->dump());
    return std::nullopt;
  }
  return x;
}

std::optional<double> ObjectReader::number(std::string_view key, Presence presence, double min, double max) {
  const std::string bounds = max == std::numeric_limits<double>::max()
                                 ? "at least " + format_number(min)
                                 : "between " + format_number(min) + " and " + format_number(max);
  return bounded_number(key, presence, {min, max, false, "a number", "a number " + bounds});
}

std::optional<double> ObjectReader::positive_number(std::string_view key, Presence presence, double max) {
  const std::string bound = max == std::numeric_limits<double>::max() ? "" : " and at most " + format_number(max);
  return bounded_number(key, presence, {0, max, true, "a number", "a number greater than 0" + bound});
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, Presence presence, std::int64_t min,
                                                  std::int64_t max) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  const bool integral = value->is_number_integer() || value->is_number_unsigned() ||
                        (value->is_number_float() && std::floor(value->get<double>()) == value->get<double>() &&
                         std::abs(value->get<double>()) < 9e15);
  if (!integral) {
    error(key, "expected an integer, found " + describe_value(*value));
    return std::nullopt;
  }
  if (value->is_number_unsigned() && value->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    error(key, "expected an integer between " + std::to_string(min) + " and " + std::to_string(max) +
                   ", found " + value->dump());
    return std::nullopt;
  }
  const auto x = value->is_number_float() ? static_cast<std::int64_t>(value->get<double>())
                                          : value->get<std::int64_t>();
  if (x < min || x > max) {
    std::string range = max == std::numeric_limits<std::int64_t>::max()
                            ? "at least " + std::to_string(min)
                            : "between " + std::to_string(min) + " and " + std::to_string(max);
    error(key, "expected an integer " + range + ", found " + value->dump());
    return std::nullopt;
  }
  return x;
}

std::optional<double> ObjectReader::percentage(std::string_view key, Presence presence) {
  return bounded_number(key, presence,
                        {0, 100, false, "a percentage (a number from 0 to 100)", "a percentage from 0 to 100"});
}

std::optional<Seconds> ObjectReader::duration(std::string_view key, Presence presence) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    error(key, "expected a duration string such as \"5m\" or \"30d\", found " + describe_value(*value));
    return std::nullopt;
  }
  auto parsed = parse_duration(value->get<std::string>());
  if (!parsed.ok()) {
    error(key, parsed.status().message());
    return std::nullopt;
  }
  if (parsed->count() <= 0) {
    error(key, "expected a positive duration, found \"" + value->get<std::string>() + "\"");
    return std::nullopt;
  }
  return *parsed;
}

std::optional<Instant> ObjectReader::instant(std::string_view key, Presence presence) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    error(key, "expected a UTC time string such as \"2026-01-05T00:00:00Z\", found " + describe_value(*value));
    return std::nullopt;
  }
  auto parsed = parse_instant(value->get<std::string>());
  if (!parsed.ok()) {
    error(key, parsed.status().message());
    return std::nullopt;
  }
  return *parsed;
}

std::optional<std::vector<std::string>> ObjectReader::string_array(std::string_view key, Presence presence,
                                                                   bool non_empty) {
  const json* value = field(key, presence);
  if (value == nullptr) return std::nullopt;
  if (!value->is_array()) {
    error(key, "expected an array of strings, found " + describe_value(*value));
    return std::nullopt;
  }
  if (non_empty && value->empty()) {
    error(key, "expected at least one entry");
    return std::nullopt;
  }
  std::vector<std::string> items;
  bool ok = true;
  const std::string pointer = child_pointer(pointer_, key);
  for (std::size_t i = 0; i < value->size(); ++i) {
    const json& element = (*value)[i];
    if (!element.is_string() || element.get<std::string>().empty()) {
      sink_.error(child_pointer(pointer, i), "expected a non-empty string, found " + describe_value(element));
      ok = false;
      continue;
    }
    auto item = element.get<std::string>();
    if (std::find(items.begin(), items.end(), item) != items.end()) {
      sink_.error(child_pointer(pointer, i), "duplicate entry '" + item + "'");
      ok = false;
      continue;
    }
    items.push_back(std::move(item));
  }
  if (!ok) return std::nullopt;
  return items;
}

bool ObjectReader::array(std::string_view key, Presence presence,
                         const std::function<void(const json&, const std::string&)>& each) {
  const json* value = field(key, presence);
  if (value == nullptr) return false;
  if (!value->is_array()) {
    error(key, "expected an array, found " + describe_value(*value));
    return false;
  }
  const std::string pointer = child_pointer(pointer_, key);
  for (std::size_t i = 0; i < value->size(); ++i) each((*value)[i], child_pointer(pointer, i));
  return true;
}

bool ObjectReader::map(std::string_view key, Presence presence,
                       const std::function<void(const std::string&, const json&, const std::string&)>& each) {
  const json* value = field(key, presence);
  if (value == nullptr) return false;
  if (!value->is_object()) {
    error(key, "expected an object, found " + describe_value(*value));
    return false;
  }
  const std::string pointer = child_pointer(pointer_, key);
  for (const auto& [member, member_value] : value->items()) each(member, member_value, child_pointer(pointer, member));
  return true;
}

void ObjectReader::finish() {
  if (finished_) return;
  finished_ = true;
  for (const auto& [key, unused] : value_.items()) {
    if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
      sink_.error(child_pointer(pointer_, key), "unknown field '" + key + "'" + text::did_you_mean(key, allowed_));
    }
  }
}

}  // namespace fleetcast::scenarios
