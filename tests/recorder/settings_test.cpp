// The recorder's settings table (gpumemtrace/settings.h) against what reads it and what
// documents it: every default reads as a value of its setting, and docs/configuration.md's
// recorder table lists exactly the table's settings, each with its default.
#include "config.h"

#include <gpumemtrace/settings.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

using gmt::settings::kRecorderSettings;

namespace {

// The rows of the "Recorder: environment variables" table: variable -> default cell.
std::map<std::string, std::string> documentedSettings() {
    std::ifstream in(GMT_SOURCE_DIR "/docs/configuration.md");
    REQUIRE(in);
    std::map<std::string, std::string> rows;
    bool inSection = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("## ", 0) == 0) {
            inSection = line == "## Recorder: environment variables";
            continue;
        }
        if (!inSection || line.rfind("| `", 0) != 0) {
            continue;
        }
        // | `NAME` | DEFAULT | meaning | option |
        const size_t name_end = line.find('`', 3);
        const size_t cell = line.find('|', name_end);
        const size_t cell_end = line.find('|', cell + 1);
        REQUIRE(cell_end != std::string::npos);
        rows[line.substr(3, name_end - 3)] = line.substr(cell + 1, cell_end - cell - 1);
    }
    return rows;
}

} // namespace

TEST_CASE("docs/configuration.md documents every recorder setting with its default",
          "[recorder][settings]") {
    const std::map<std::string, std::string> documented = documentedSettings();
    std::set<std::string> names;
    for (const gmt::settings::Setting* s : kRecorderSettings) {
        names.insert(s->name);
        INFO(s->name);
        auto row = documented.find(s->name);
        REQUIRE(row != documented.end());
        CHECK(row->second.find(std::string("`") + s->default_value + "`") != std::string::npos);
    }
    for (const auto& [name, cell] : documented) {
        INFO(name << " is documented but not in gpumemtrace/settings.h");
        CHECK(names.count(name) == 1);
    }
}

TEST_CASE("every default of the settings table reads as a value", "[recorder][settings]") {
    for (const gmt::settings::Setting* s : kRecorderSettings) {
        ::unsetenv(s->name);
    }
    const gmt::preload::Config c = gmt::preload::readConfig();
    CHECK(c.problems.empty());
    CHECK(c.enabled);
    CHECK(c.output_template == gmt::settings::kOutput.default_value);
    CHECK(c.stack_depth == 64);
    CHECK(c.python);
    CHECK(c.caching_allocator);
    CHECK(c.buffer_bytes == (1u << 20));
    CHECK(c.on_full == gmt::preload::OnFull::Block);
    CHECK(c.log_level == "warn");
}

TEST_CASE("a value that does not read is a problem naming it, and the default stays",
          "[recorder][settings]") {
    for (const gmt::settings::Setting* s : kRecorderSettings) {
        ::unsetenv(s->name);
    }
    ::setenv(gmt::settings::kStackDepth.name, "deep", 1);
    const gmt::preload::Config c = gmt::preload::readConfig();
    ::unsetenv(gmt::settings::kStackDepth.name);
    REQUIRE(c.problems.size() == 1);
    CHECK(c.problems[0].find("GPUMEMTRACE_STACK_DEPTH=deep") == 0);
    CHECK(c.stack_depth == 64);
}
