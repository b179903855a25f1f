// The HTML page every report is: a header, sections of text, tables and charts, the inlined chart
// library, the charts' Vega-Lite specifications as one JSON document, and the few lines that hand
// each specification to vega-embed. Also the escaping and downsampling the reports share.
//
// Escaping contract: every text a Page method takes is escaped for HTML, and the specifications
// are serialised with '<' written as \u003c, so no input can close an element or open a comment;
// invalid UTF-8 is replaced with U+FFFD (nlohmann's error_handler_t::replace and sanitise_utf8).
//
// Thread-safety: a Page is used by one thread; the free functions are pure.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleetcast/report.h"
#include "fleetcast/time.h"

namespace fleetcast::report {

using Json = nlohmann::ordered_json;

/// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string sanitise_utf8(std::string_view text);
/// `text` as HTML character data or a quoted attribute value (valid UTF-8, & < > " ' escaped).
std::string escape_html(std::string_view text);

/// Milliseconds since the epoch: Vega's time values.
inline double epoch_ms(Instant instant) { return static_cast<double>(instant.time_since_epoch().count()) * 1000.0; }

/// Display buckets of a series: `size` consecutive samples each (the last may hold fewer).
struct Bucket {
  std::size_t first = 0;  // index of the bucket's first sample
  double mean = 0, min = 0, max = 0;
};
/// The number of samples per bucket so that `samples` fit in at most `max_points` buckets (>= 1).
std::size_t bucket_size(std::size_t samples, int max_points);
std::vector<Bucket> downsample(std::span<const double> values, std::size_t size);
/// "", or the subtitle that says how a chart was downsampled: "downsampled for display: each point
/// is the mean (band: min-max) of 12 steps of 5m".
std::string downsampling_note(std::size_t size, Seconds step, bool with_range);

/// "$1,234.56"; "12.34%".
std::string usd(double amount);
std::string percent(double fraction, int decimals = 2);

class Page {
 public:
  explicit Page(std::string title);

  /// Starts a section: an <h2> with `id` as its anchor, listed in the page's contents.
  void section(std::string_view id, std::string_view heading);
  void subheading(std::string_view text);
  void paragraph(std::string_view text);
  /// A small table of label/value pairs.
  void facts(const std::vector<std::pair<std::string, std::string>>& rows);
  /// A table; cells are text. Columns whose header is in `numeric` are right-aligned.
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::vector<std::size_t>& numeric = {});
  void bullets(const std::vector<std::string>& items);
  /// A chart: a Vega-Lite specification, drawn where it is added.
  void chart(Json spec);

  /// The whole document.
  [[nodiscard]] std::string render(const ReportOptions& options) const;

 private:
  std::string title_;
  std::string body_;
  std::vector<std::pair<std::string, std::string>> contents_;  // (anchor, heading)
  Json specs_ = Json::object();
  int charts_ = 0;
};

}  // namespace fleetcast::report
