// Small text helpers shared by the parsers: exact number parsing (locale-independent, whole
// string only), trimming, edit distance for "did you mean" suggestions, and sizes in messages.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fleetcast::text {

/// The whole of `s` as a finite double, or nullopt ("1e3" and "-0.5" parse; "", "1x", "nan",
/// "inf" and "1e400" do not; "1e-400", too small for a double, reads as 0, as JSON readers read it).
std::optional<double> parse_double(std::string_view s) noexcept;
/// The whole of `s` as an int64 in base 10, or nullopt (no sign other than a leading '-').
std::optional<std::int64_t> parse_int64(std::string_view s) noexcept;

std::string_view trim(std::string_view s) noexcept;

/// Levenshtein distance between two strings (case-sensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` when it is close enough to be a plausible typo (distance at
/// most a third of the word's length, at least 1), else nullopt.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);

/// Whether `name` is one of `names` (exactly).
bool contains(std::span<const std::string> names, std::string_view name) noexcept;

/// " (did you mean 'x'?)" when closest_match finds one, else "".
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

/// `value` in fixed notation with `decimals` digits after the point ("%.*f"), however large.
std::string format_fixed(double value, int decimals);

/// `value` in at most six significant digits, as a stream writes a double ("%g"): "2", "0.0001",
/// "12.5", "1.23457e+06". For a number a person wrote or will read back (a limit, a level).
std::string format_general(double value);

/// A byte count for a message, in GiB with one decimal ("1.5 GiB"; "0.1 GiB" at least).
std::string format_gibibytes(std::int64_t bytes);

}  // namespace fleetcast::text
