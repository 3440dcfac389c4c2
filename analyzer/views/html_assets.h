// The HTML report's page, scripts and styles, compiled in from analyzer/views/html/ (and uPlot
// from analyzer/views/html/node_modules) by cmake/EmbedHtmlAssets.cmake at build time.
#pragma once

#include <string_view>

namespace gmt::analyzer::html_assets {

extern const bool kHaveLibraries;      // false: built without the npm packages (no uPlot)
extern const std::string_view kPage;   // page.html, with /*GMT_STYLE*/ /*GMT_DATA*/ /*GMT_SCRIPT*/
extern const std::string_view kStyle;  // every style sheet
extern const std::string_view kScript; // every script, libraries first

} // namespace gmt::analyzer::html_assets
