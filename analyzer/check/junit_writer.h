// JUnit XML for `gpumemtrace check --junit`: the format GitLab, Jenkins and the GitHub
// test-report actions all read. One <testsuite> per traced process, one <testcase> per
// check, so a CI page shows "leaks" / "peak" / "errors" per process.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gmt::cli {

struct JUnitCase {
    std::string name;
    std::string classname;
    bool failed = false;
    std::string failure_message; // one line: what was exceeded
    std::string failure_type;
    std::string failure_text; // the details (stacks)
    std::string system_out;   // shown for passing cases too
};

struct JUnitSuite {
    std::string name;
    double time_s = 0;
    std::vector<std::pair<std::string, std::string>> properties;
    std::vector<JUnitCase> cases;
};

std::string renderJUnit(const std::vector<JUnitSuite>& suites, const std::string& name);
// The same XML handed to `write` a test case at a time.
void writeJUnit(const std::vector<JUnitSuite>& suites, const std::string& name,
                const std::function<void(std::string_view)>& write);

// Escapes for both text and attribute values; characters XML 1.0 forbids (most C0
// controls) and bytes that are not UTF-8 become U+FFFD, so a stray byte in a symbol or a
// path never makes the file unreadable.
std::string xmlEscape(std::string_view text);

} // namespace gmt::cli
