#include "core/text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <vector>

namespace fleetcast::text {

std::optional<double> parse_double(std::string_view s) noexcept {
  if (s.empty()) return std::nullopt;
  const char* first = s.data();
  if (*first == '+') ++first;  // from_chars refuses a leading '+', people write it
  double value = 0;
  auto [end, ec] = std::from_chars(first, s.data() + s.size(), value);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Too small for a double (1e-400, 0.000...1): zero, as JSON readers and strtod read it; too
    // large is refused. The magnitude is below 1 when the exponent is negative or, without one,
    // the integer part is zero.
    const std::string_view number(first, static_cast<std::size_t>(end - first));
    const std::size_t exponent = number.find_first_of("eE");
    const bool tiny = exponent != std::string_view::npos
                          ? exponent + 1 < number.size() && number[exponent + 1] == '-'
                          : number.substr(0, number.find('.')).find_first_not_of("-0") == std::string_view::npos;
    if (!tiny) return std::nullopt;
    return number.front() == '-' ? -0.0 : 0.0;
  }
  if (ec != std::errc{} || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_int64(std::string_view s) noexcept {
  if (s.empty()) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::string_view trim(std::string_view s) noexcept {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(kSpace);
  return s.substr(first, last - first + 1);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates) {
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

bool contains(std::span<const std::string> names, std::string_view name) noexcept {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  auto match = closest_match(word, candidates);
  return match ? " (did you mean '" + *match + "'?)" : std::string{};
}

std::string format_fixed(double value, int decimals) {
  const int size = std::snprintf(nullptr, 0, "%.*f", decimals, value);
  std::string text(static_cast<std::size_t>(std::max(size, 0)), '\0');
  std::snprintf(text.data(), text.size() + 1, "%.*f", decimals, value);
  return text;
}

std::string format_general(double value) {
  char text[32];  // "%g" writes at most 6 digits, a sign, a point and a 5-character exponent
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string format_gibibytes(std::int64_t bytes) {
  const double gib = std::max(0.1, static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return format_fixed(gib, 1) + " GiB";
}

}  // namespace fleetcast::text
