// The chart library every report inlines: Vega, Vega-Lite and vega-embed, minified, from
// report/assets (npm, pinned by its package-lock.json), compiled into the library by
// report/embed_scripts.cmake.
//
// Thread-safety: the text is built once, on first use (a function-local static), and only read.
#pragma once

#include <string>

namespace fleetcast::report {

/// The three scripts, each in a <script> element, in load order (vega, vega-lite, vega-embed).
const std::string& chart_library_html();

}  // namespace fleetcast::report
