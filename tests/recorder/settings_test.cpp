// The recorder's settings table (gpumemtrace/settings.h) against what reads it and what
// documents it: every default reads as a value of its setting, and docs/configuration.md's
// recorder table lists exactly the table's settings, each with its default (an empty one
// as "none").
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
        const std::string shown =
            *s->default_value ? std::string("`") + s->default_value + "`" : "none";
        CHECK(row->second.find(shown) != std::string::npos);
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
    CHECK(c.failure_file.empty());
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

namespace {

// readConfig with the one setting `name` = `value` (every other one unset).
gmt::preload::Config configWith(const char* name, const char* value) {
    for (const gmt::settings::Setting* s : kRecorderSettings) {
        ::unsetenv(s->name);
    }
    ::setenv(name, value, 1);
    gmt::preload::Config c = gmt::preload::readConfig();
    ::unsetenv(name);
    return c;
}

} // namespace

TEST_CASE("switches take 0/1 and the usual words for them, nothing else", "[recorder][settings]") {
    using gmt::settings::kCachingAllocator;
    using gmt::settings::kPython;
    for (const char* off : {"0", "false", "no", "off"}) {
        INFO(off);
        CHECK_FALSE(configWith(kPython.name, off).python);
        CHECK_FALSE(configWith(kCachingAllocator.name, off).caching_allocator);
    }
    for (const char* on : {"1", "true", "yes", "on"}) {
        INFO(on);
        CHECK(configWith(kPython.name, on).python);
        CHECK(configWith(kCachingAllocator.name, on).caching_allocator);
    }
    // Garbage is not "on": a problem naming the variable and the default used.
    for (const char* name : {kPython.name, kCachingAllocator.name}) {
        const gmt::preload::Config c = configWith(name, "garbage");
        INFO(name);
        REQUIRE(c.problems.size() == 1);
        CHECK(c.problems[0].find(std::string(name) + "=garbage is not valid") == 0);
        CHECK(c.problems[0].find("using 1") != std::string::npos);
        CHECK(c.python);
        CHECK(c.caching_allocator);
    }
}

TEST_CASE("a value echoed in a problem cannot reach the terminal as a control sequence",
          "[recorder][settings]") {
    const gmt::preload::Config c =
        configWith(gmt::settings::kStackDepth.name, "\x1b]0;title\x07\x1b[2J\xc2\x9b"
                                                    "31m\n");
    REQUIRE(c.problems.size() == 1);
    const std::string& problem = c.problems[0];
    CHECK(problem.find("GPUMEMTRACE_STACK_DEPTH=\\x1b]0;title\\x07\\x1b[2J\\xc2\\x9b31m\\x0a is") ==
          0);
    for (char ch : problem) {
        const auto b = static_cast<unsigned char>(ch);
        CHECK((b >= 0x20 && b < 0x7f));
    }
}

TEST_CASE("a buffer size over the most a ring may be is clamped, once, saying so",
          "[recorder][settings]") {
    const gmt::preload::Config c = configWith(gmt::settings::kBufferSize.name, "99999999G");
    CHECK(c.buffer_bytes == gmt::settings::kMaxBufferBytes);
    REQUIRE(c.problems.size() == 1);
    CHECK(c.problems[0] ==
          "GPUMEMTRACE_BUFFER_SIZE=99999999G is more than the ring may be; clamped to 256M");
    // At the bound: taken as it is.
    const gmt::preload::Config at = configWith(gmt::settings::kBufferSize.name, "256M");
    CHECK(at.buffer_bytes == (256u << 20));
    CHECK(at.problems.empty());
}
