#include "check/sarif_writer.h"
#include "base/json_sink.h"
#include "base/version.h"

#include "views/frame_text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>

namespace gmt::cli {

using analyzer::Json;

namespace {

struct Rule {
    const char* id;
    const char* name;
    const char* text;
};

// Every rule a result can have, in a fixed order (results refer to them by index).
constexpr Rule kRules[] = {
    {"leak", "GpuMemoryLeak", "GPU memory allocated here is never freed"},
    {"growth", "GpuMemoryGrowth", "GPU memory allocated here grows in every iteration"},
    {"peak", "GpuMemoryPeak", "GPU memory held here at a peak over the limit"},
    {"double_free", "GpuDoubleFree", "GPU memory freed twice"},
    {"invalid_free", "GpuInvalidFree", "A free of an address that was never allocated"},
    {"mismatched_free", "GpuMismatchedFree", "GPU memory freed with the wrong API"},
    {"unlisted", "GpuApiMisuse", "Errors beyond the listed ones"},
    {"check", "GpuMemoryCheck", "A gpumemtrace check failed (no source location)"},
};

size_t ruleIndex(const std::string& id) {
    for (size_t i = 0; i < std::size(kRules); ++i) {
        if (id == kRules[i].id) {
            return i;
        }
    }
    return std::size(kRules) - 1;
}

// RFC 3986: what is not unreserved or '/' is percent-encoded.
std::string uriPath(const std::string& path) {
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

Json artifact(const std::string& file) {
    if (!file.empty() && file.front() == '/') {
        return Json{{"uri", "file://" + uriPath(file)}};
    }
    return Json{{"uri", uriPath(file)}, {"uriBaseId", "SRCROOT"}};
}

Json physical(const SourceLocation& where) {
    return Json{{"artifactLocation", artifact(where.file)},
                {"region", Json{{"startLine", std::max(where.line, 1)}}}};
}

Json frameLocation(const analyzer::Frame& f, const SourceRoot& root) {
    Json location = Json::object();
    if (!f.file.empty() && f.line > 0) {
        location["physicalLocation"] = physical({root.relative(f.file), f.line, f.function});
    }
    location["message"] = Json{{"text", analyzer::frameText(f).str()}};
    return location;
}

Json stackOf(const analyzer::Stack& stack, const SourceRoot& root) {
    Json frames = Json::array();
    for (const analyzer::Frame& f : stack) {
        if (!analyzer::hiddenFrame(f)) {
            frames.push_back(Json{{"location", frameLocation(f, root)}});
        }
    }
    return Json{{"message", Json{{"text", "allocation stack, innermost frame first"}}},
                {"frames", std::move(frames)}};
}

// FNV-1a: a fingerprint that is the same on every machine and every run.
std::string fingerprint(const std::string& rule, const analyzer::Stack& stack) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : rule + "\n" + analyzer::siteKey(stack)) {
        h = (h ^ c) * 1099511628211ull;
    }
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

Json result(const std::string& rule, const char* level, const std::string& message,
            const ProcessVerdict& v) {
    const size_t index = ruleIndex(rule);
    return Json{{"ruleId", std::string("gpumemtrace/") + kRules[index].id},
                {"ruleIndex", index},
                {"level", level},
                {"message", Json{{"text", message + " (" + stableName(v) + ")"}}},
                {"properties", Json{{"process", stableName(v)}}}};
}

} // namespace

void writeSarif(const std::vector<ProcessVerdict>& verdicts, const SourceRoot& root,
                const std::function<void(std::string_view)>& write) {
    Json rules = Json::array();
    for (const Rule& r : kRules) {
        rules.push_back(Json{{"id", std::string("gpumemtrace/") + r.id},
                             {"name", r.name},
                             {"shortDescription", Json{{"text", r.text}}},
                             {"defaultConfiguration", Json{{"level", "error"}}},
                             {"properties", Json{{"tags", Json::array({"gpu", "memory"})}}}});
    }
    std::string out;
    analyzer::JsonTextSink sink(out, 2, write);
    sink.beginObject();
    sink.key("$schema");
    sink.value("https://json.schemastore.org/sarif-2.1.0.json");
    sink.key("version");
    sink.value("2.1.0");
    sink.key("runs");
    sink.beginArray();
    sink.beginObject();
    sink.key("tool");
    analyzer::emitJson(Json{{"driver", Json{{"name", "gpumemtrace"},
                                            {"version", analyzer::gpumemtraceVersion()},
                                            {"semanticVersion", analyzer::gpumemtraceVersion()},
                                            {"rules", std::move(rules)}}}},
                       sink);
    sink.key("originalUriBaseIds");
    analyzer::emitJson(Json{{"SRCROOT", Json{{"uri", "file://" + uriPath(root.directory())}}}},
                       sink);
    // The results last, each written as soon as it is made: a result's tree lives only
    // while it is written, so memory is the log's own bytes however many sites fail.
    sink.key("results");
    sink.beginArray();
    for (const ProcessVerdict& v : verdicts) {
        for (const CheckOutcome& c : v.checks) {
            const bool noted = !c.failed && c.name == "growth" && !c.findings.empty();
            if (!c.failed && !noted) {
                continue;
            }
            const char* level = c.failed ? "error" : "warning";
            if (c.findings.empty()) {
                analyzer::emitJson(result("check", level, c.name + ": " + c.summary, v), sink);
                continue;
            }
            for (const Finding& f : c.findings) {
                Json r = result(f.rule, level, f.message, v);
                if (const auto where = locate(*f.stack, root)) {
                    Json location = Json{{"physicalLocation", physical(*where)}};
                    if (!where->function.empty()) {
                        location["logicalLocations"] = Json::array(
                            {Json{{"fullyQualifiedName", where->function}, {"kind", "function"}}});
                    }
                    r["locations"] = Json::array({std::move(location)});
                }
                r["stacks"] = Json::array({stackOf(*f.stack, root)});
                r["partialFingerprints"] =
                    Json{{"gpumemtraceSite/v1", fingerprint(f.rule, *f.stack)}};
                r["properties"]["bytes"] = f.bytes;
                analyzer::emitJson(r, sink);
            }
        }
    }
    sink.end(); // results
    sink.end(); // the run
    sink.end(); // runs
    sink.end();
    out += '\n';
    sink.flush();
}

} // namespace gmt::cli
