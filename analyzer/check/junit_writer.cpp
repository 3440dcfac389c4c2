#include "check/junit_writer.h"

#include "base/text_safety.h"

#include <cstdio>
#include <sstream>

namespace gmt::cli {

std::string xmlEscape(std::string_view raw) {
    // XML must be valid UTF-8: a byte from a trace that is not (a path in Latin-1) would
    // make the whole file unreadable.
    std::string text = analyzer::validUtf8(raw);
    // U+FFFE and U+FFFF are valid UTF-8 but not XML characters.
    for (const char* bad : {"\xEF\xBF\xBE", "\xEF\xBF\xBF"}) {
        for (size_t at = text.find(bad); at != std::string::npos; at = text.find(bad, at)) {
            text.replace(at, 3, "\xEF\xBF\xBD");
        }
    }
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        // Attribute values would turn raw newlines and tabs into spaces.
        case '\n':
            out += "&#10;";
            break;
        case '\t':
            out += "&#9;";
            break;
        case '\r':
            out += "&#13;";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                out += "\xEF\xBF\xBD";
            } else {
                out += c;
            }
        }
    }
    return out;
}

void writeJUnit(const std::vector<JUnitSuite>& suites, const std::string& name,
                const std::function<void(std::string_view)>& write) {
    size_t tests = 0, failures = 0;
    double time_s = 0;
    for (const JUnitSuite& s : suites) {
        tests += s.cases.size();
        time_s += s.time_s;
        for (const JUnitCase& c : s.cases) {
            failures += c.failed ? 1 : 0;
        }
    }
    auto seconds = [](double t) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", t);
        return std::string(buf);
    };
    // Handed on a test case at a time: a failure's text can list a million stacks.
    std::ostringstream out;
    const auto drain = [&out, &write] {
        write(out.view());
        out.str({});
    };
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"" << xmlEscape(name) << "\" tests=\"" << tests << "\" failures=\""
        << failures << "\" errors=\"0\" time=\"" << seconds(time_s) << "\">\n";
    for (size_t i = 0; i < suites.size(); ++i) {
        const JUnitSuite& s = suites[i];
        size_t suite_failures = 0;
        for (const JUnitCase& c : s.cases) {
            suite_failures += c.failed ? 1 : 0;
        }
        out << "  <testsuite name=\"" << xmlEscape(s.name) << "\" id=\"" << i << "\" tests=\""
            << s.cases.size() << "\" failures=\"" << suite_failures
            << "\" errors=\"0\" skipped=\"0\" time=\"" << seconds(s.time_s) << "\">\n";
        if (!s.properties.empty()) {
            out << "    <properties>\n";
            for (const auto& [key, value] : s.properties) {
                out << "      <property name=\"" << xmlEscape(key) << "\" value=\""
                    << xmlEscape(value) << "\"/>\n";
            }
            out << "    </properties>\n";
        }
        for (const JUnitCase& c : s.cases) {
            out << "    <testcase name=\"" << xmlEscape(c.name) << "\" classname=\""
                << xmlEscape(c.classname) << "\" time=\"0\">\n";
            if (c.failed) {
                out << "      <failure message=\"" << xmlEscape(c.failure_message) << "\" type=\""
                    << xmlEscape(c.failure_type) << "\">" << xmlEscape(c.failure_text)
                    << "</failure>\n";
            }
            if (!c.system_out.empty()) {
                out << "      <system-out>" << xmlEscape(c.system_out) << "</system-out>\n";
            }
            out << "    </testcase>\n";
            drain();
        }
        out << "  </testsuite>\n";
    }
    out << "</testsuites>\n";
    drain();
}

std::string renderJUnit(const std::vector<JUnitSuite>& suites, const std::string& name) {
    std::string out;
    writeJUnit(suites, name, [&out](std::string_view piece) { out += piece; });
    return out;
}

} // namespace gmt::cli
