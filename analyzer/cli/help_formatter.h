// `--help` fitted to the terminal: CLI11 (2.1) writes each option's description on one
// line however long, so an 80-column terminal folds it under the option names. This
// formatter wraps descriptions at word boundaries within the terminal's width (the width
// text output uses, cli/terminal_style.h; 80 columns when there is no terminal), indented
// under the description column.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace gmt::cli {

// `text` wrapped into lines of at most `width` columns at spaces (a word longer than a
// line stays whole); its own line breaks are kept.
std::string wrapWords(const std::string& text, size_t width);

class WrappingFormatter : public CLI::Formatter {
  public:
    explicit WrappingFormatter(size_t width) : width_(width) {}

    std::string make_option_desc(const CLI::Option* opt) const override;
    std::string make_description(const CLI::App* app) const override;

  private:
    size_t width_;
};

// The formatter for a terminal of `width` columns (0: none), set on `app` and every
// subcommand.
void useWrappingFormatter(CLI::App& app, size_t width);

} // namespace gmt::cli
