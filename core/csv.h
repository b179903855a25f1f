// A strict CSV reader (RFC 4180: comma-separated, optional double quotes with "" escapes, LF or
// CRLF line ends) that keeps the 1-based line number of every row, so parsers built on it can
// name the line of a bad value. The first non-empty line is the header; blank lines are skipped.
//
// Thread-safety: pure functions; CsvTable is a value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/status.h"

namespace fleetcast::csv {

/// The largest input file read_text_file reads (256 MiB): far above any real catalog, history or
/// scenario, and a bound on the memory a mistaken path (a device, a log) can take.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{256} << 20;

/// The longest CSV record parse accepts (1 MiB): real rows are a few hundred bytes, and a longer
/// one is a file that is not CSV.
inline constexpr std::size_t kMaxCsvLineBytes = std::size_t{1} << 20;

struct CsvTable {
  std::string source;                          // file name used in messages
  std::int64_t header_line = 0;                // 1-based
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each has header.size() fields
  std::vector<std::int64_t> row_lines;         // 1-based line number of each row

  /// Index of the column whose header is `name` (exact, after trimming), or nullopt.
  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
  /// The indexes of the named columns, in the order given; invalid_argument naming the header line
  /// and every expected column ("expected a header with columns 'a' and 'b'") when one is missing,
  /// or naming both columns when the header names one of them twice (which would be read is a guess).
  [[nodiscard]] Result<std::vector<std::size_t>> require_columns(std::initializer_list<std::string_view> names) const;
  /// "<source>:<line>" of row `row`, for messages.
  [[nodiscard]] std::string where(std::size_t row) const;
};

/// Parses CSV text. Errors (invalid_argument) name `source` and the line: a row with a different
/// number of fields than the header, an unterminated quote, no header at all, a record longer
/// than kMaxCsvLineBytes.
Result<CsvTable> parse(std::string_view text, std::string source);

/// Reads and parses a file; a missing or unreadable file is not_found / permission_denied.
Result<CsvTable> read_file(const std::filesystem::path& path);

/// `field` as one CSV field: as it is when it holds no comma, quote, CR or LF, else in double
/// quotes with inner quotes doubled (RFC 4180), so parse() reads it back unchanged.
std::string quote_field(std::string_view field);

/// Reads a whole regular file into a string; errors name the path. A device, pipe or socket is
/// refused (it may never end), and so is a file larger than kMaxInputFileBytes.
Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace fleetcast::csv
