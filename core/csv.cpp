#include "core/csv.h"

#include <fstream>
#include <system_error>

#include "core/text.h"

namespace fleetcast::csv {

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (text::trim(header[i]) == name) return i;
  }
  return std::nullopt;
}

Result<std::vector<std::size_t>> CsvTable::require_columns(std::initializer_list<std::string_view> names) const {
  std::vector<std::size_t> indexes;
  std::string expected;  // "'a', 'b' and 'c'"
  std::size_t count = 0;
  for (std::string_view name : names) {
    if (auto index = column(name)) {
      // A second column of the name would be read as nothing: which one the writer meant is unknown.
      for (std::size_t later = *index + 1; later < header.size(); ++later) {
        if (text::trim(header[later]) == name) {
          return invalid_argument_error(source + ":" + std::to_string(header_line) + ": the header names column '" +
                                        std::string(name) + "' twice (columns " + std::to_string(*index + 1) + " and " +
                                        std::to_string(later + 1) + "); expected it once");
        }
      }
      indexes.push_back(*index);
    }
    if (count > 0) expected += count + 1 == names.size() ? " and " : ", ";
    expected += "'" + std::string(name) + "'";
    ++count;
  }
  if (indexes.size() == names.size()) return indexes;
  return invalid_argument_error(source + ":" + std::to_string(header_line) + ": expected a header with columns " + expected);
}

std::string CsvTable::where(std::size_t row) const {
  return source + ":" + std::to_string(row_lines.at(row));
}

namespace {

// Splits one logical record starting at `pos`; advances `pos` and `line` past it. A quoted field
// may span lines.
Status parse_record(std::string_view text, std::size_t& pos, std::int64_t& line,
                    const std::string& source, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  const std::int64_t start_line = line;
  bool in_quotes = false;
  bool field_was_quoted = false;
  while (pos < text.size()) {
    const char c = text[pos];
    if (in_quotes) {
      if (c == '"') {
        if (pos + 1 < text.size() && text[pos + 1] == '"') {
          field += '"';
          pos += 2;
          continue;
        }
        in_quotes = false;
        ++pos;
        continue;
      }
      if (c == '\n') ++line;
      field += c;
      ++pos;
      continue;
    }
    if (c == '"' && text::trim(field).empty() && !field_was_quoted) {
      field.clear();
      in_quotes = true;
      field_was_quoted = true;
      ++pos;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      field_was_quoted = false;
      ++pos;
    } else if (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') {
      ++pos;
    } else if (c == '\n') {
      ++pos;
      ++line;
      fields.push_back(std::move(field));
      return {};
    } else {
      field += c;
      ++pos;
    }
  }
  if (in_quotes) {
    return invalid_argument_error(source + ":" + std::to_string(start_line) +
                                  ": unterminated quoted field");
  }
  fields.push_back(std::move(field));
  ++line;
  return {};
}

bool is_blank(const std::vector<std::string>& fields) {
  return fields.size() == 1 && text::trim(fields[0]).empty();
}

}  // namespace

Result<CsvTable> parse(std::string_view text, std::string source) {
  CsvTable table;
  table.source = std::move(source);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  std::size_t pos = 0;
  std::int64_t line = 1;
  std::vector<std::string> fields;
  while (pos < text.size()) {
    const std::int64_t record_line = line;
    const std::size_t record_start = pos;
    if (Status status = parse_record(text, pos, line, table.source, fields); !status.ok()) {
      return status;
    }
    if (pos - record_start > kMaxCsvLineBytes) {
      return invalid_argument_error(table.source + ":" + std::to_string(record_line) + ": a record of " +
                                    std::to_string(pos - record_start) + " bytes, more than the limit of " +
                                    std::to_string(kMaxCsvLineBytes) + "; expected CSV rows");
    }
    if (is_blank(fields)) continue;
    if (table.header.empty()) {
      table.header = fields;
      table.header_line = record_line;
      for (auto& name : table.header) name = std::string(text::trim(name));
      continue;
    }
    if (fields.size() != table.header.size()) {
      return invalid_argument_error(table.source + ":" + std::to_string(record_line) + ": expected " +
                                    std::to_string(table.header.size()) + " fields as in the header, found " +
                                    std::to_string(fields.size()));
    }
    table.rows.push_back(fields);
    table.row_lines.push_back(record_line);
  }
  if (table.header.empty()) return invalid_argument_error(table.source + ": empty file, expected a CSV header");
  return table;
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return not_found_error(path.string() + ": no such file");
  if (std::filesystem::is_directory(status)) {
    return invalid_argument_error(path.string() + ": is a directory, expected a file");
  }
  // A device or a pipe may never end (/dev/zero), so only regular files are read.
  if (!std::filesystem::is_regular_file(status)) {
    return invalid_argument_error(path.string() + ": is not a regular file (a device, pipe or socket), expected a file");
  }
  const std::string too_large = path.string() + ": larger than the limit of " + std::to_string(kMaxInputFileBytes) +
                                " bytes on input files";
  if (const std::uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxInputFileBytes) {
    return invalid_argument_error(too_large);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return permission_denied_error(path.string() + ": cannot open for reading");
  // Read at most one byte past the limit, as the file may grow after its size was taken.
  std::string contents;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    contents.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (contents.size() > kMaxInputFileBytes) return invalid_argument_error(too_large);
  }
  if (in.bad()) return data_loss_error(path.string() + ": read error");
  return contents;
}

Result<CsvTable> read_file(const std::filesystem::path& path) {
  auto contents = read_text_file(path);
  if (!contents.ok()) return contents.status();
  return parse(*contents, path.string());
}

std::string quote_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (const char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

}  // namespace fleetcast::csv
