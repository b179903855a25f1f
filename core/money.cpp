#include "fleetcast/money.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace fleetcast {

namespace {

// 128-bit intermediates make rate x seconds exact (GCC/Clang extension, hence __extension__).
__extension__ typedef __int128 Int128;

// numerator / denominator rounded to nearest, halves away from zero. denominator > 0.
std::int64_t divide_rounding_half_away(Int128 numerator, Int128 denominator) {
  const Int128 magnitude = numerator < 0 ? -numerator : numerator;
  const Int128 rounded = (2 * magnitude + denominator) / (2 * denominator);
  return static_cast<std::int64_t>(numerator < 0 ? -rounded : rounded);
}

Status usd_error(std::string_view text, std::string_view why) {
  return invalid_argument_error("'" + std::string(text) + "' is not a USD amount (" + std::string(why) +
                                "); expected a decimal number such as \"3.06\"");
}

}  // namespace

Money Money::from_usd(double usd) { return Money{static_cast<std::int64_t>(std::llround(usd * 1e6))}; }

Money Money::prorate(Seconds duration) const {
  return Money{divide_rounding_half_away(static_cast<Int128>(micro_usd_) * duration.count(), 3600)};
}

Result<Money> parse_usd(std::string_view text) {
  if (text.empty()) return usd_error(text, "empty");
  std::size_t pos = 0;
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    ++pos;
  }
  Int128 whole = 0;
  std::size_t whole_digits = 0;
  for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos, ++whole_digits) {
    whole = whole * 10 + (text[pos] - '0');
    if (whole > std::numeric_limits<std::int64_t>::max() / 1'000'000) return usd_error(text, "too large");
  }
  Int128 fraction_scaled = 0;  // fraction in units of 1e-6, before rounding the rest
  std::size_t fraction_digits = 0;
  bool round_up = false;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos, ++fraction_digits) {
      if (fraction_digits < 6) {
        fraction_scaled = fraction_scaled * 10 + (text[pos] - '0');
      } else if (fraction_digits == 6) {
        round_up = text[pos] >= '5';  // the seventh digit decides: halves away from zero
      }
    }
  }
  if (pos != text.size()) return usd_error(text, "unexpected character");
  if (whole_digits == 0 && fraction_digits == 0) return usd_error(text, "no digits");
  for (std::size_t i = fraction_digits; i < 6; ++i) fraction_scaled *= 10;
  Int128 micro = whole * 1'000'000 + fraction_scaled + (round_up ? 1 : 0);
  if (micro > std::numeric_limits<std::int64_t>::max()) return usd_error(text, "too large");
  return Money::from_micro_usd(static_cast<std::int64_t>(negative ? -micro : micro));
}

std::string format_usd(Money amount) {
  const std::int64_t micro = amount.micro_usd();
  const bool negative = micro < 0;
  // Work in unsigned to format INT64_MIN correctly.
  const std::uint64_t magnitude =
      negative ? static_cast<std::uint64_t>(-(micro + 1)) + 1 : static_cast<std::uint64_t>(micro);
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%s%llu.%06llu", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1'000'000),
                static_cast<unsigned long long>(magnitude % 1'000'000));
  return buffer;
}

}  // namespace fleetcast
