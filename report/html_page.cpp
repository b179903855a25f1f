#include "report/html_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/json_text.h"
#include "report/chart_library.h"

namespace fleetcast::report {

std::string sanitise_utf8(std::string_view text) {
  // A round trip through nlohmann's serialiser would do it too, but also escapes; this keeps the
  // bytes of every valid sequence and writes U+FFFD for each invalid byte.
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    std::uint32_t code = length == 1 ? byte : length == 2 ? byte & 0x1F : length == 3 ? byte & 0x0F : byte & 0x07;
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    if (valid && ((length == 2 && code < 0x80) || (length == 3 && code < 0x800) || (length == 4 && code < 0x10000) ||
                  (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF)) {
      valid = false;
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string escape_html(std::string_view text) {
  std::string out;
  for (char c : sanitise_utf8(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::size_t bucket_size(std::size_t samples, int max_points) {
  const auto points = static_cast<std::size_t>(std::max(max_points, 10));
  return std::max<std::size_t>(1, (samples + points - 1) / points);
}

std::vector<Bucket> downsample(std::span<const double> values, std::size_t size) {
  std::vector<Bucket> buckets;
  size = std::max<std::size_t>(size, 1);
  buckets.reserve((values.size() + size - 1) / size);
  for (std::size_t first = 0; first < values.size(); first += size) {
    const std::size_t end = std::min(values.size(), first + size);
    Bucket bucket{first, 0, values[first], values[first]};
    for (std::size_t i = first; i < end; ++i) {
      bucket.mean += values[i];
      bucket.min = std::min(bucket.min, values[i]);
      bucket.max = std::max(bucket.max, values[i]);
    }
    bucket.mean /= static_cast<double>(end - first);
    buckets.push_back(bucket);
  }
  return buckets;
}

std::string downsampling_note(std::size_t size, Seconds step, bool with_range) {
  if (size <= 1) return "";
  return "downsampled for display: each point is the mean" + std::string(with_range ? " (band: min-max)" : "") + " of " +
         std::to_string(size) + " steps of " + format_duration(step);
}

std::string usd(double amount) {
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.2f", std::fabs(amount));
  std::string whole(digits, std::string_view(digits).find('.'));
  for (int at = static_cast<int>(whole.size()) - 3; at > 0; at -= 3) whole.insert(static_cast<std::size_t>(at), ",");
  return std::string(amount < 0 ? "-$" : "$") + whole + std::string_view(digits).substr(std::string_view(digits).find('.')).data();
}

std::string percent(double fraction, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f%%", decimals, fraction * 100);
  return text;
}

Page::Page(std::string title) : title_(std::move(title)) {}

void Page::section(std::string_view id, std::string_view heading) {
  const std::string anchor = "s-" + escape_html(id);
  contents_.emplace_back(anchor, std::string(heading));
  body_ += "<h2 id=\"" + anchor + "\">" + escape_html(heading) + "</h2>\n";
}

void Page::subheading(std::string_view text) { body_ += "<h3>" + escape_html(text) + "</h3>\n"; }

void Page::paragraph(std::string_view text) { body_ += "<p>" + escape_html(text) + "</p>\n"; }

void Page::facts(const std::vector<std::pair<std::string, std::string>>& rows) {
  body_ += "<table class=\"facts\">";
  for (const auto& [label, value] : rows) body_ += "<tr><th>" + escape_html(label) + "</th><td>" + escape_html(value) + "</td></tr>";
  body_ += "</table>\n";
}

void Page::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<std::size_t>& numeric) {
  const auto cell = [&](std::string_view tag, std::size_t column, const std::string& text) {
    const bool right = std::find(numeric.begin(), numeric.end(), column) != numeric.end();
    return "<" + std::string(tag) + (right ? " class=\"num\">" : ">") + escape_html(text) + "</" + std::string(tag) + ">";
  };
  body_ += "<table><thead><tr>";
  for (std::size_t c = 0; c < header.size(); ++c) body_ += cell("th", c, header[c]);
  body_ += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) body_ += cell("td", c, row[c]);
    body_ += "</tr>\n";
  }
  body_ += "</tbody></table>\n";
}

void Page::bullets(const std::vector<std::string>& items) {
  body_ += "<ul>";
  for (const auto& item : items) body_ += "<li>" + escape_html(item) + "</li>";
  body_ += "</ul>\n";
}

void Page::chart(Json spec) {
  const std::string id = "chart-" + std::to_string(charts_++);
  body_ += "<div class=\"chart\" id=\"" + id + "\"></div>\n";
  specs_[id] = std::move(spec);
}

namespace {

// The page's only script of its own: hands each specification to vega-embed and records the views
// and any error where a test (or a curious reader's console) can find them.
constexpr std::string_view kBootstrap = R"js(
(function () {
  var specs = JSON.parse(document.getElementById('fleetcast-specs').textContent);
  var state = { views: {}, errors: [] };
  window.fleetcastReport = state;
  state.ready = Promise.all(Object.keys(specs).map(function (id) {
    return vegaEmbed('#' + id, specs[id], { actions: false, renderer: 'canvas' })
      .then(function (result) { state.views[id] = result.view; })
      .catch(function (error) { state.errors.push(id + ': ' + error); console.error(id, error); });
  }));
})();
)js";

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1.5rem 3rem; color: #1f2328; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 1rem; }
h1 { font-size: 1.6rem; margin: 1.2rem 0 0.3rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #eaeef2; padding-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
nav a { margin-right: 1rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
table.facts th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { width: 100%; margin: 0.8rem 0 1.2rem; }
footer { margin-top: 2rem; color: #656d76; font-size: 0.85rem; }
)css";

}  // namespace

std::string Page::render(const ReportOptions& options) const {
  std::string html;
  html.reserve(body_.size() + 1'300'000);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may leave the page: no network source is allowed for anything. Vega compiles its
  // expressions with Function(), hence 'unsafe-eval'; vega-embed adds a <style>.
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
          "'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + escape_html(title_) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  html += "<header><h1>" + escape_html(title_) + "</h1><nav>";
  for (const auto& [anchor, heading] : contents_) html += "<a href=\"#" + anchor + "\">" + escape_html(heading) + "</a>";
  html += "</nav></header>\n<main>\n" + body_ + "</main>\n<footer>";
  html += "Drawn with Vega-Lite (vega-embed), inlined: this file needs no network. Drag a time chart to pan, scroll to zoom, "
          "double-click to reset.";
  if (!options.generated_by.empty()) html += " " + escape_html(options.generated_by) + ".";
  html += "</footer>\n";
  html += chart_library_html();
  // '<' as \u003c: the JSON cannot end its <script> element nor open a comment, whatever it holds.
  std::string specs = json_text::dump(specs_);
  std::string escaped;
  escaped.reserve(specs.size());
  for (char c : specs) {
    if (c == '<') {
      escaped += "\\u003c";
    } else {
      escaped += c;
    }
  }
  html += "<script type=\"application/json\" id=\"fleetcast-specs\">" + escaped + "</script>\n";
  html += "<script>" + std::string(kBootstrap) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace fleetcast::report
