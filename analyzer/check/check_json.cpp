#include "check/check_json.h"
#include "base/version.h"

#include "views/frame_text.h"

namespace gmt::cli {

using analyzer::Json;

namespace {

Json optional(const std::optional<uint64_t>& v) {
    return v ? Json(*v) : Json(nullptr);
}

Json findingJson(const Finding& f, const SourceRoot& root) {
    Json stack = Json::array();
    for (const analyzer::FrameText& line :
         analyzer::stackText(*f.stack, {.full = false, .max_frames = SIZE_MAX})) {
        stack.push_back(line.str());
    }
    const auto where = locate(*f.stack, root);
    return Json{{"rule", f.rule},
                {"message", f.message},
                {"bytes", f.bytes},
                {"file", where ? Json(where->file) : Json(nullptr)},
                {"line", where ? Json(where->line) : Json(nullptr)},
                {"function", where ? Json(where->function) : Json(nullptr)},
                {"stack", std::move(stack)}};
}

Json outcomeJson(const CheckOutcome& c, const SourceRoot& root) {
    Json details = Json::array();
    for (const DetailLine& line : c.details) {
        details.push_back(line.str());
    }
    Json findings = Json::array();
    for (const Finding& f : c.findings) {
        findings.push_back(findingJson(f, root));
    }
    return Json{{"name", c.name},
                {"passed", !c.failed},
                {"summary", c.summary},
                {"value", optional(c.value)},
                {"limit", optional(c.limit)},
                {"details", std::move(details)},
                {"findings", std::move(findings)}};
}

Json verdictJson(const ProcessVerdict& v, const SourceRoot& root) {
    Json notes = Json::array();
    for (const std::string& note : v.notes) {
        notes.push_back(note);
    }
    Json checks = Json::array();
    for (const CheckOutcome& c : v.checks) {
        checks.push_back(outcomeJson(c, root));
    }
    return Json{{"name", stableName(v)},
                {"passed", !v.failed()},
                {"pid", v.pid},
                {"rank", v.rank ? Json(*v.rank) : Json(nullptr)},
                {"host", v.host},
                {"command", v.command},
                {"trace_file", v.trace_file},
                {"duration_s", v.duration_s},
                {"notes", std::move(notes)},
                {"checks", std::move(checks)}};
}

} // namespace

Json checkJson(const std::vector<ProcessVerdict>& verdicts, const Suppressions& suppressions,
               const SourceRoot& root) {
    Json processes = Json::array();
    uint64_t checks = 0, failed_checks = 0, failed_processes = 0;
    for (const ProcessVerdict& v : verdicts) {
        processes.push_back(verdictJson(v, root));
        failed_processes += v.failed() ? 1 : 0;
        for (const CheckOutcome& c : v.checks) {
            ++checks;
            failed_checks += c.failed ? 1 : 0;
        }
    }
    Json used = Json::array();
    for (const Suppression& s : suppressions.entries()) {
        used.push_back(Json{{"suppression", s.text()},
                            {"origin", s.origin},
                            {"uses", s.uses},
                            {"bytes", s.bytes},
                            {"allocations", s.allocations}});
    }
    return Json{{"schema_version", kCheckSchemaVersion}, {"generator", analyzer::generatorName()},
                {"passed", failed_processes == 0},       {"checks", checks},
                {"failed_checks", failed_checks},        {"failed_processes", failed_processes},
                {"processes", std::move(processes)},     {"suppressions", std::move(used)}};
}

} // namespace gmt::cli
