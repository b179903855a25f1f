// Money: an exact amount of US dollars in integer micro-USD (1 USD = 1,000,000 micro-USD).
//
// Sums in the cost ledger are exact, so a run reproduces to the cent. Rounding rule, everywhere a
// value has to be rounded to a whole micro-USD: to the nearest micro-USD, halves away from zero
// (so 0.5 micro-USD becomes 1 and -0.5 becomes -1). This applies to
//   - decimal strings with more than six fractional digits (parse_usd is exact otherwise),
//   - conversions from double (from_usd),
//   - prorating an hourly rate over a duration (prorate), computed in 128-bit integers, so the
//     result is the exact product rounded once.
// Optimisation code may use double internally; what is billed is always Money.
//
// Thread-safety: value type.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast {

class Money {
 public:
  constexpr Money() = default;
  static constexpr Money from_micro_usd(std::int64_t micro_usd) { return Money{micro_usd}; }
  /// Rounds to the nearest micro-USD, halves away from zero. NaN and values beyond +-9.2e12 USD
  /// are refused by parse_usd; from_usd is for values already known to be finite and in range.
  static Money from_usd(double usd);

  [[nodiscard]] constexpr std::int64_t micro_usd() const { return micro_usd_; }
  [[nodiscard]] double usd() const { return static_cast<double>(micro_usd_) / 1e6; }

  /// The cost of `duration` at this hourly rate: rate * seconds / 3600, rounded once.
  [[nodiscard]] Money prorate(Seconds duration) const;
  /// This amount times a count (e.g. instances), exact.
  [[nodiscard]] constexpr Money times(std::int64_t count) const { return Money{micro_usd_ * count}; }

  constexpr Money& operator+=(Money other) { micro_usd_ += other.micro_usd_; return *this; }
  constexpr Money& operator-=(Money other) { micro_usd_ -= other.micro_usd_; return *this; }
  friend constexpr Money operator+(Money a, Money b) { return Money{a.micro_usd_ + b.micro_usd_}; }
  friend constexpr Money operator-(Money a, Money b) { return Money{a.micro_usd_ - b.micro_usd_}; }
  friend constexpr Money operator-(Money a) { return Money{-a.micro_usd_}; }
  friend constexpr auto operator<=>(Money, Money) = default;

 private:
  constexpr explicit Money(std::int64_t micro_usd) : micro_usd_(micro_usd) {}
  std::int64_t micro_usd_ = 0;
};

/// Parses a decimal USD amount such as "3.06", "-0.5", "12", "0.0000005" (an optional leading
/// sign, digits, an optional fraction; no exponent, no thousands separators, no currency sign).
Result<Money> parse_usd(std::string_view text);

/// "$1,234.56" style is left to presentation; this gives the plain "1234.560000" with six decimals.
std::string format_usd(Money amount);

}  // namespace fleetcast
