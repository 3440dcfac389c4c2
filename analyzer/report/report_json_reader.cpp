// fromJson: a saved JSON report -> the typed Report, strictly. Which fields are required
// follows docs/report.schema.json; fields added since (optional there) read as their
// defaults when absent, so reports saved by earlier versions stay readable.
#include "report/report_json.h"

#include <charconv>
#include <limits>

namespace gmt::analyzer {

namespace {

// A JSON value and where it is in the report, for errors that name the field.
class Field {
  public:
    Field(const Json& json, std::string path) : json_(json), path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw ReportFormatError((path_.empty() ? std::string("the report") : path_) + ": " + what);
    }

    // A required member.
    Field at(const char* key) const {
        requireObject();
        auto it = json_.find(key);
        if (it == json_.end()) {
            Field(json_, member(key)).fail("missing");
        }
        return Field(*it, member(key));
    }
    // An optional member: absent or null reads as absent.
    std::optional<Field> find(const char* key) const {
        requireObject();
        auto it = json_.find(key);
        if (it == json_.end() || it->is_null()) {
            return std::nullopt;
        }
        return Field(*it, member(key));
    }

    template <typename F> void forEach(F&& f) const {
        if (!json_.is_array()) {
            fail("expected an array");
        }
        for (size_t i = 0; i < json_.size(); ++i) {
            f(Field(json_[i], path_ + "[" + std::to_string(i) + "]"));
        }
    }

    uint64_t u64() const {
        if (!json_.is_number_unsigned()) {
            fail("expected an unsigned integer");
        }
        return json_.get<uint64_t>();
    }
    int64_t i64() const {
        if (json_.is_number_unsigned()) {
            const auto v = json_.get<uint64_t>();
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                fail("integer out of range");
            }
            return static_cast<int64_t>(v);
        }
        if (!json_.is_number_integer()) {
            fail("expected an integer");
        }
        return json_.get<int64_t>();
    }
    int i32() const {
        const int64_t v = i64();
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
            fail("integer out of range");
        }
        return static_cast<int>(v);
    }
    double number() const {
        if (!json_.is_number()) {
            fail("expected a number");
        }
        return json_.get<double>();
    }
    bool boolean() const {
        if (!json_.is_boolean()) {
            fail("expected true or false");
        }
        return json_.get<bool>();
    }
    std::string str() const {
        if (!json_.is_string()) {
            fail("expected a string");
        }
        return json_.get<std::string>();
    }
    // "0x1f" as written by base/hex.h's hex().
    uint64_t hex() const {
        const std::string s = str();
        uint64_t v = 0;
        const char* end = s.data() + s.size();
        if (s.size() < 3 || s.compare(0, 2, "0x") != 0 ||
            std::from_chars(s.data() + 2, end, v, 16).ptr != end) {
            fail("expected a hex string like \"0x1f\"");
        }
        return v;
    }

  private:
    void requireObject() const {
        if (!json_.is_object()) {
            fail("expected an object");
        }
    }
    std::string member(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

    const Json& json_;
    std::string path_;
};

uint64_t u64(const Field& f, const char* key) {
    return f.at(key).u64();
}
uint64_t u64Or(const Field& f, const char* key, uint64_t fallback) {
    auto v = f.find(key);
    return v ? v->u64() : fallback;
}
std::string str(const Field& f, const char* key) {
    return f.at(key).str();
}
std::string strOr(const Field& f, const char* key) {
    auto v = f.find(key);
    return v ? v->str() : std::string();
}
bool boolOr(const Field& f, const char* key, bool fallback) {
    auto v = f.find(key);
    return v ? v->boolean() : fallback;
}

format::Kind kindOf(const Field& f) {
    const std::string name = f.str();
    for (auto k :
         {format::Kind::None, format::Kind::Device, format::Kind::Pool, format::Kind::Managed,
          format::Kind::HostPinned, format::Kind::Array, format::Kind::Vmm, format::Kind::Block}) {
        if (format::kindName(k) == name) {
            return k;
        }
    }
    f.fail("unknown kind \"" + name + "\"");
}

format::PythonStatus pythonStatusOf(const Field& f) {
    const std::string name = f.str();
    for (auto s : {format::PythonStatus::NotDetected, format::PythonStatus::Captured,
                   format::PythonStatus::Disabled, format::PythonStatus::Unsupported,
                   format::PythonStatus::Failed, format::PythonStatus::Pending}) {
        if (format::pythonStatusName(s) == name) {
            return s;
        }
    }
    f.fail("unknown Python status \"" + name + "\"");
}

format::PhaseKind phaseKindOf(const Field& f) {
    const std::string name = f.str();
    for (auto k : {format::PhaseKind::Mark, format::PhaseKind::Push, format::PhaseKind::Pop}) {
        if (format::phaseKindName(k) == name) {
            return k;
        }
    }
    f.fail("unknown phase kind \"" + name + "\"");
}

Frame frameOf(const Field& f) {
    Frame frame;
    if (auto language = f.find("language")) {
        const std::string l = language->str();
        if (l == "python") {
            frame.language = FrameLanguage::Python;
        } else if (l != "native") {
            language->fail("expected \"native\" or \"python\"");
        }
    }
    const Field address = f.at("address");
    if (frame.language == FrameLanguage::Native || !address.str().empty()) {
        frame.address = address.hex();
    }
    frame.module = str(f, "module");
    frame.function = str(f, "function");
    frame.file = str(f, "file");
    frame.line = f.at("line").i32();
    if (frame.line < 0) {
        f.at("line").fail("expected a line number >= 0");
    }
    frame.inlined = f.at("inlined").boolean();
    if (auto offset = f.find("offset")) {
        frame.offset = offset->hex();
    }
    return frame;
}

std::vector<std::string> strings(const Field& f) {
    std::vector<std::string> out;
    f.forEach([&](const Field& item) { out.push_back(item.str()); });
    return out;
}

Stack stackOf(const Field& f) {
    Stack stack;
    f.forEach([&](const Field& frame) { stack.push_back(frameOf(frame)); });
    return stack;
}

std::vector<std::pair<int64_t, uint64_t>> devicePeaksOf(const Field& f) {
    std::vector<std::pair<int64_t, uint64_t>> out;
    f.forEach(
        [&](const Field& d) { out.emplace_back(d.at("device").i64(), u64(d, "peak_bytes")); });
    return out;
}

ProcessReport processOf(const Field& f) {
    ProcessReport p;
    p.pid = u64(f, "pid");
    p.command = str(f, "command");
    p.trace_file = str(f, "trace_file");
    p.complete = f.at("complete").boolean();
    p.events = u64(f, "events");
    p.dropped_events = u64(f, "dropped_events");
    p.duration_ns = u64(f, "duration_ns");
    p.ppid = u64Or(f, "ppid", 0);
    p.executable = strOr(f, "executable");
    p.host = strOr(f, "host");
    p.start_mono_ns = u64Or(f, "start_mono_ns", 0);
    p.end_mono_ns = u64Or(f, "end_mono_ns", p.start_mono_ns + p.duration_ns);
    p.start_wall_ns = u64Or(f, "start_wall_ns", 0);
    p.driver_version = u64Or(f, "driver_version", 0);
    p.allocations = u64Or(f, "allocations", 0);
    p.frees = u64Or(f, "frees", 0);
    p.failed_allocations = u64Or(f, "failed_allocations", 0);
    p.errors = u64Or(f, "errors", 0);
    p.leaked_bytes = u64Or(f, "leaked_bytes", 0);
    p.recovered_records = u64Or(f, "recovered_records", 0);
    if (auto v = f.find("rank")) {
        p.rank = v->i64();
    }
    if (auto v = f.find("exit_signal")) {
        p.exit_signal = v->i64();
    }
    if (auto v = f.find("incomplete_reason")) {
        p.incomplete_reason = v->str();
    }
    if (auto v = f.find("valid_log_end_offset")) {
        p.valid_log_end_offset = v->u64();
    }
    p.log_failed = boolOr(f, "log_failed", false);
    if (auto v = f.find("in_flight_calls")) {
        p.in_flight_calls = v->u64();
    }
    if (auto phases = f.find("phases")) {
        phases->forEach([&](const Field& m) {
            PhaseMarker marker;
            marker.time_ns = u64(m, "time_ns");
            marker.name = str(m, "name");
            if (auto kind = m.find("kind")) { // saved before phases nested: marks
                marker.kind = phaseKindOf(*kind);
            }
            marker.tid = u64Or(m, "tid", 0);
            if (auto path = m.find("path")) {
                marker.path = strings(*path);
            } else if (marker.kind != format::PhaseKind::Pop || !marker.name.empty()) {
                marker.path = {marker.name};
            }
            p.phases.push_back(std::move(marker));
        });
    }
    p.peak_bytes = u64Or(f, "peak_bytes", 0);
    if (auto peaks = f.find("device_peaks")) {
        p.device_peaks = devicePeaksOf(*peaks);
    }
    if (auto python = f.find("python")) {
        p.python = PythonRuntime{str(*python, "version"), pythonStatusOf(python->at("status"))};
    }
    if (auto m = f.find("missing_events")) {
        MissingEventsReport missing;
        missing.dropped_events = u64(*m, "dropped_events");
        missing.missing_positions = u64(*m, "missing_positions");
        missing.gap_count = u64(*m, "gap_count");
        m->at("gaps").forEach([&](const Field& g) {
            missing.gaps.push_back({u64(g, "first_position"), u64(g, "positions"),
                                    u64(g, "after_time_ns"), u64(g, "before_time_ns")});
        });
        missing.unknown_tail = m->at("unknown_tail").boolean();
        p.missing_events = std::move(missing);
    }
    return p;
}

Summary summaryOf(const Field& f) {
    Summary s;
    s.allocations = u64(f, "allocations");
    s.frees = u64(f, "frees");
    s.failed_allocations = u64(f, "failed_allocations");
    s.errors = u64(f, "errors");
    s.leaked_bytes = u64(f, "leaked_bytes");
    s.leaked_allocations = u64(f, "leaked_allocations");
    s.peak_bytes = u64(f, "peak_bytes");
    s.peak_time_ns = u64(f, "peak_time_ns");
    s.leak_groups = u64Or(f, "leak_groups", 0);
    s.teardown_released_bytes = u64Or(f, "teardown_released_bytes", 0);
    s.uncertain_errors = u64Or(f, "uncertain_errors", 0);
    s.uncertain_leaked_bytes = u64Or(f, "uncertain_leaked_bytes", 0);
    return s;
}

LeakSite leakOf(const Field& f) {
    LeakSite l;
    l.bytes = u64(f, "bytes");
    l.allocations = u64(f, "allocations");
    l.kind = kindOf(f.at("kind"));
    l.api = str(f, "api");
    l.stack = stackOf(f.at("stack"));
    l.released_by_teardown = boolOr(f, "released_by_teardown", false);
    l.pid = u64Or(f, "pid", 0);
    l.stack_id = u64Or(f, "stack_id", 0);
    l.uncertain_bytes = u64Or(f, "uncertain_bytes", 0);
    l.uncertain_allocations = u64Or(f, "uncertain_allocations", 0);
    return l;
}

LeakScope scopeOf(const Report& r, const std::optional<Field>& f) {
    LeakScope s;
    if (!f) {
        // Saved before the scope existed: the whole report, nothing suppressed.
        s.bytes = r.summary.leaked_bytes;
        s.allocations = r.summary.leaked_allocations;
        s.sites = std::max<uint64_t>(r.summary.leak_groups, r.leaks.size());
        return s;
    }
    f->at("phase"); // required, null for the whole run
    if (auto phase = f->find("phase")) {
        s.phase = phase->str();
    }
    s.bytes = u64(*f, "bytes");
    s.allocations = u64(*f, "allocations");
    s.sites = u64(*f, "sites");
    s.suppressed_bytes = u64(*f, "suppressed_bytes");
    s.suppressed_allocations = u64(*f, "suppressed_allocations");
    s.suppressed_sites = u64(*f, "suppressed_sites");
    s.uncertain_bytes = u64Or(*f, "uncertain_bytes", 0);
    s.uncertain_allocations = u64Or(*f, "uncertain_allocations", 0);
    return s;
}

// A StackRef: null, or an index into `stacks` (read first).
StackRef stackRefOf(const Field& f, size_t stacks) {
    auto v = f.find("stack");
    if (!v) {
        f.at("stack"); // required, may be null
        return std::nullopt;
    }
    const uint64_t index = v->u64();
    if (index >= stacks) {
        v->fail("no such entry in stacks[] (" + std::to_string(stacks) + " entries)");
    }
    return static_cast<uint32_t>(index);
}

LayoutReport layoutOf(const Field& f, size_t stacks) {
    LayoutReport l;
    f.at("spans").forEach([&](const Field& s) {
        l.spans.push_back({s.at("address").hex(), u64(s, "bytes"), s.at("reservation").boolean()});
    });
    f.at("blocks").forEach([&](const Field& b) {
        l.blocks.push_back(LayoutBlockReport{
            b.at("address").hex(), u64(b, "extent"), u64(b, "bytes"), u64(b, "pinned_bytes"),
            kindOf(b.at("kind")), str(b, "api"), stackRefOf(b, stacks)});
    });
    f.at("holes").forEach([&](const Field& h) {
        l.holes.push_back({h.at("address").hex(), u64(h, "bytes")});
    });
    l.span_count = u64(f, "span_count");
    l.block_count = u64(f, "block_count");
    return l;
}

std::vector<SiteRef> siteRefsOf(const Field& f, size_t stacks) {
    std::vector<SiteRef> out;
    f.forEach([&](const Field& s) {
        out.push_back(
            SiteRef{u64(s, "pid"), u64(s, "bytes"), u64(s, "allocations"), stackRefOf(s, stacks)});
    });
    return out;
}

KindTimelineReport kindTimelineOf(const Field& f) {
    KindTimelineReport t;
    t.device = f.at("device").i64();
    f.at("kinds").forEach([&](const Field& k) { t.kinds.push_back(kindOf(k)); });
    f.at("time_ns").forEach([&](const Field& v) { t.time_ns.push_back(v.u64()); });
    const Field bytes = f.at("bytes");
    bytes.forEach([&](const Field& series) {
        t.bytes.emplace_back();
        series.forEach([&](const Field& v) { t.bytes.back().push_back(v.u64()); });
        if (t.bytes.back().size() != t.time_ns.size()) {
            series.fail("expected as many values as time_ns has");
        }
    });
    if (t.bytes.size() != t.kinds.size()) {
        bytes.fail("expected one series per kind");
    }
    return t;
}

// The detail fields (report.h ReportDetail); all optional.
void detailOf(const Field& root, Report& r) {
    if (auto stacks = root.find("stacks")) {
        stacks->forEach([&](const Field& s) {
            r.stacks.push_back(
                StackEntry{u64(s, "pid"), u64(s, "stack_id"), stackOf(s.at("frames"))});
        });
    }
    r.stacks_left_out = u64Or(root, "stacks_left_out", 0);
    if (auto timeline = root.find("kind_timeline")) {
        timeline->forEach([&](const Field& t) { r.kind_timeline.push_back(kindTimelineOf(t)); });
    }
    if (auto moments = root.find("moments")) {
        moments->forEach([&](const Field& m) {
            r.moments.push_back(MomentReport{u64(m, "time_ns"), u64(m, "until_ns"),
                                             u64(m, "live_bytes"), u64(m, "sites"),
                                             siteRefsOf(m.at("top_sites"), r.stacks.size())});
        });
    }
    if (auto a = root.find("allocated")) {
        r.allocated = AllocatedReport{u64(*a, "bytes"), u64(*a, "allocations"), u64(*a, "sites"),
                                      siteRefsOf(a->at("top_sites"), r.stacks.size())};
    }
}

FragmentationReport fragmentationOf(const Field& f, size_t stacks) {
    FragmentationReport r;
    const Field moment = f.at("moment");
    const std::string m = moment.str();
    if (m == "peak") {
        r.moment = Moment::Peak;
    } else if (m == "failure") {
        r.moment = Moment::Failure;
    } else if (m == "end") {
        r.moment = Moment::End;
    } else {
        moment.fail("expected \"peak\", \"failure\" or \"end\"");
    }
    r.time_ns = u64(f, "time_ns");
    r.device = f.at("device").i64();
    r.granularity = u64(f, "granularity");
    r.hole_bytes = u64(f, "hole_bytes");
    r.largest_hole_bytes = u64(f, "largest_hole_bytes");
    r.ratio = f.at("ratio").number();
    f.at("holes").forEach([&](const Field& h) {
        r.holes.push_back({h.at("address").hex(), u64(h, "bytes")});
    });
    r.hole_count = u64Or(f, "hole_count", r.holes.size());
    if (auto pins = f.find("pinning")) {
        pins->forEach([&](const Field& p) {
            r.pinning.push_back(PinReport{p.at("address").hex(), u64(p, "bytes"),
                                          u64(p, "pinned_bytes"), kindOf(p.at("kind")),
                                          str(p, "api"), stackOf(p.at("stack"))});
        });
    }
    r.pid = u64Or(f, "pid", 0);
    r.exact = boolOr(f, "exact", true);
    r.live_bytes = u64Or(f, "live_bytes", 0);
    r.device_total_bytes = u64Or(f, "device_total_bytes", 0);
    if (auto layout = f.find("layout")) {
        r.layout = layoutOf(*layout, stacks);
    }
    return r;
}

FailureReport failureOf(const Field& f) {
    FailureReport r;
    r.time_ns = u64(f, "time_ns");
    r.api = str(f, "api");
    r.requested_bytes = u64(f, "requested_bytes");
    r.error = str(f, "error");
    r.live_bytes = u64(f, "live_bytes");
    f.at("device_free_bytes"); // required, may be null
    if (auto v = f.find("device_free_bytes")) {
        r.device_free_bytes = v->u64();
    }
    f.at("largest_hole_bytes");
    if (auto v = f.find("largest_hole_bytes")) {
        r.largest_hole_bytes = v->u64();
    }
    r.diagnosis = str(f, "diagnosis");
    r.stack = stackOf(f.at("stack"));
    if (auto v = f.find("result")) {
        r.result = v->i64();
    }
    if (auto v = f.find("device")) {
        r.device = v->i64();
    }
    r.device_total_bytes = u64Or(f, "device_total_bytes", 0);
    r.kind = strOr(f, "kind");
    r.pid = u64Or(f, "pid", 0);
    return r;
}

ErrorReport errorOf(const Field& f) {
    ErrorReport e;
    const Field type = f.at("type");
    const std::string t = type.str();
    bool known = false;
    for (auto candidate :
         {ErrorType::DoubleFree, ErrorType::InvalidFree, ErrorType::MismatchedFree}) {
        if (errorTypeName(candidate) == t) {
            e.type = candidate;
            known = true;
        }
    }
    if (!known) {
        type.fail("expected \"double_free\", \"invalid_free\" or \"mismatched_free\"");
    }
    e.api = str(f, "api");
    e.address = f.at("address").hex();
    e.time_ns = u64(f, "time_ns");
    e.stack = stackOf(f.at("stack"));
    e.allocation_stack = stackOf(f.at("allocation_stack"));
    e.allocation_api = strOr(f, "allocation_api");
    e.detail = strOr(f, "detail");
    if (auto v = f.find("result")) {
        e.result = v->i64();
    }
    e.pid = u64Or(f, "pid", 0);
    e.uncertain = boolOr(f, "uncertain", false);
    return e;
}

TimelineReport timelineOf(const Field& f) {
    TimelineReport t;
    t.device = f.at("device").i64();
    f.at("points").forEach([&](const Field& point) {
        std::vector<uint64_t> pair;
        point.forEach([&](const Field& v) { pair.push_back(v.u64()); });
        if (pair.size() != 2) {
            point.fail("expected [time_ns, bytes]");
        }
        t.points.emplace_back(pair[0], pair[1]);
    });
    return t;
}

PhaseReport phaseOf(const Field& f) {
    PhaseReport p;
    p.pid = u64(f, "pid");
    p.name = str(f, "name");
    p.occurrences = u64(f, "occurrences");
    p.first_time_ns = u64(f, "first_time_ns");
    p.duration_ns = u64(f, "duration_ns");
    p.allocations = u64(f, "allocations");
    p.allocated_bytes = u64(f, "allocated_bytes");
    p.frees = u64(f, "frees");
    p.peak_bytes = u64(f, "peak_bytes");
    p.peak_time_ns = u64(f, "peak_time_ns");
    p.leaked_bytes = u64(f, "leaked_bytes");
    p.leaked_allocations = u64(f, "leaked_allocations");
    if (auto path = f.find("path")) {
        p.path = strings(*path);
    } else {
        p.path = {p.name}; // saved before phases nested
    }
    p.peak_above_start_bytes = u64Or(f, "peak_above_start_bytes", 0);
    return p;
}

IterationReport iterationOf(const Field& f) {
    IterationReport it;
    it.pid = u64(f, "pid");
    it.source = str(f, "source");
    if (it.source != "phase" && it.source != "pattern" && it.source != "none") {
        f.at("source").fail("expected \"phase\", \"pattern\" or \"none\"");
    }
    it.phase = str(f, "phase");
    it.stack = stackOf(f.at("stack"));
    it.stack_id = u64(f, "stack_id");
    it.boundaries = u64(f, "boundaries");
    it.note = str(f, "note");
    it.growing_sites = u64(f, "growing_sites");
    it.growth_bytes_per_iteration = u64(f, "growth_bytes_per_iteration");
    return it;
}

GrowthSite growthOf(const Field& f) {
    GrowthSite g;
    g.pid = u64(f, "pid");
    g.bytes_per_iteration = u64(f, "bytes_per_iteration");
    g.first_iteration = u64(f, "first_iteration");
    g.iterations = u64(f, "iterations");
    g.growing_iterations = u64(f, "growing_iterations");
    g.confidence = f.at("confidence").number();
    if (g.confidence < 0 || g.confidence > 1) {
        f.at("confidence").fail("expected a number from 0 to 1");
    }
    g.live_bytes = u64(f, "live_bytes");
    g.stack = stackOf(f.at("stack"));
    g.stack_id = u64(f, "stack_id");
    g.phase = strings(f.at("phase"));
    return g;
}

RankRow rankOf(const Field& f) {
    RankRow row;
    row.rank = f.at("rank").i64();
    row.host = str(f, "host");
    row.pid = u64(f, "pid");
    row.command = str(f, "command");
    row.peak_bytes = u64(f, "peak_bytes");
    row.device_peaks = devicePeaksOf(f.at("device_peaks"));
    row.leaked_bytes = u64(f, "leaked_bytes");
    row.growth_bytes_per_iteration = u64(f, "growth_bytes_per_iteration");
    row.failed_allocations = u64(f, "failed_allocations");
    row.errors = u64(f, "errors");
    row.outlier = strings(f.at("outlier"));
    return row;
}

GrowthScope growthScopeOf(const Report& r, const std::optional<Field>& f) {
    GrowthScope s;
    if (!f) { // saved before growth was measured: what is listed
        s.sites = r.growth.size();
        for (const GrowthSite& g : r.growth) {
            s.bytes_per_iteration += g.bytes_per_iteration;
        }
        return s;
    }
    f->at("phase"); // required, null for the whole run
    if (auto phase = f->find("phase")) {
        s.phase = phase->str();
    }
    s.sites = u64(*f, "sites");
    s.bytes_per_iteration = u64(*f, "bytes_per_iteration");
    return s;
}

HeldSite heldSiteOf(const Field& s) {
    return HeldSite{u64(s, "bytes"), u64(s, "allocations"),  kindOf(s.at("kind")),
                    str(s, "api"),   stackOf(s.at("stack")), u64(s, "stack_id")};
}

InsideSegmentsReport spaceOf(const Field& f) {
    InsideSegmentsReport m;
    m.pid = u64(f, "pid");
    const std::string moment = str(f, "moment");
    if (moment == "peak") {
        m.moment = Moment::Peak;
    } else if (moment == "oom") {
        m.moment = Moment::Failure;
    } else {
        f.at("moment").fail("expected \"peak\" or \"oom\"");
    }
    m.time_ns = u64(f, "time_ns");
    m.device = f.at("device").i64();
    m.exact = f.at("exact").boolean();
    m.reserved_bytes = u64(f, "reserved_bytes");
    m.allocated_bytes = u64(f, "allocated_bytes");
    m.active_bytes = u64(f, "active_bytes");
    m.requested_bytes = u64(f, "requested_bytes");
    m.reserved_unallocated_bytes = u64(f, "reserved_unallocated_bytes");
    m.free_bytes = u64(f, "free_bytes");
    m.inactive_split_blocks = u64(f, "inactive_split_blocks");
    m.inactive_split_bytes = u64(f, "inactive_split_bytes");
    m.releasable_bytes = u64(f, "releasable_bytes");
    m.largest_free_bytes = u64(f, "largest_free_bytes");
    f.at("streams").forEach([&](const Field& st) {
        m.streams.push_back({st.at("stream").hex(), u64(st, "reserved_bytes"),
                             u64(st, "allocated_bytes"), u64(st, "free_bytes"),
                             u64(st, "largest_free_bytes")});
    });
    f.at("segments").forEach([&](const Field& seg) {
        m.segments.push_back({seg.at("address").hex(), u64(seg, "bytes"),
                              u64(seg, "allocated_bytes"), u64(seg, "free_bytes"),
                              u64(seg, "largest_free_bytes"), seg.at("stream").hex(),
                              seg.at("expandable").boolean()});
    });
    m.segment_count = u64(f, "segment_count");
    return m;
}

// PREFIX bytes, blocks, sites and top_sites (report_json_writer.cpp).
ExitBlocks exitBlocksOf(const Field& p, const std::string& prefix) {
    ExitBlocks out;
    out.bytes = u64(p, (prefix + "bytes").c_str());
    out.blocks = u64(p, (prefix + "blocks").c_str());
    out.sites = u64(p, (prefix + "sites").c_str());
    p.at((prefix + "top_sites").c_str()).forEach([&](const Field& s) {
        out.top_sites.push_back(heldSiteOf(s));
    });
    return out;
}

CachingReport cachingOf(const Field& f) {
    CachingReport c;
    f.at("processes").forEach([&](const Field& p) {
        CachingAllocatorReport a;
        a.pid = u64(p, "pid");
        a.allocator = str(p, "allocator");
        a.version = str(p, "version");
        a.status = str(p, "status");
        a.detail = str(p, "detail");
        a.config = str(p, "config");
        a.sizes_exact = p.at("sizes_exact").boolean();
        a.estimated_blocks = u64(p, "estimated_blocks");
        a.unmatched_events = u64(p, "unmatched_events");
        p.at("devices").forEach([&](const Field& d) {
            a.devices.push_back(CachingDeviceReport{
                d.at("device").i64(), u64(d, "allocated_peak_bytes"),
                u64(d, "allocated_peak_time_ns"), u64(d, "reserved_peak_bytes"),
                u64(d, "reserved_peak_time_ns"), u64(d, "allocations"), u64(d, "frees"),
                u64(d, "allocated_end_bytes"), u64(d, "reserved_end_bytes")});
        });
        a.exit_freed = exitBlocksOf(p, "exit_freed_");
        a.exit_kept = exitBlocksOf(p, "exit_kept_");
        c.processes.push_back(std::move(a));
    });
    const Field peak = f.at("tensor_peak");
    c.tensor_peak.bytes = u64(peak, "bytes");
    c.tensor_peak.time_ns = u64(peak, "time_ns");
    peak.at("top_sites").forEach([&](const Field& s) {
        c.tensor_peak.top_sites.push_back(PeakSite{u64(s, "bytes"), u64(s, "allocations"),
                                                   stackOf(s.at("stack")), u64(s, "pid"),
                                                   u64(s, "stack_id")});
    });
    f.at("fragmentation").forEach([&](const Field& m) { c.fragmentation.push_back(spaceOf(m)); });
    f.at("ooms").forEach([&](const Field& o) {
        CachingOomReport out;
        out.pid = u64(o, "pid");
        out.time_ns = u64(o, "time_ns");
        out.device = o.at("device").i64();
        out.stream = o.at("stream").hex();
        out.requested_bytes = u64(o, "requested_bytes");
        out.device_free_bytes = u64(o, "device_free_bytes");
        out.released_bytes = u64(o, "released_bytes");
        out.fragmentation = o.at("fragmentation").boolean();
        out.diagnosis = str(o, "diagnosis");
        o.at("hints").forEach([&](const Field& h) {
            out.hints.push_back(OomHint{str(h, "remedy"), str(h, "verdict"),
                                        h.at("estimate").boolean(), str(h, "why")});
        });
        out.stack = stackOf(o.at("stack"));
        out.space = spaceOf(o.at("space"));
        c.ooms.push_back(std::move(out));
    });
    return c;
}

// The framework support's fields (report_json_writer.cpp frameworksJson); absent in
// reports saved before it, which read as holding nothing.
void frameworksOf(const Field& root, Report& r) {
    const Field summary = root.at("summary");
    r.summary.held_at_exit_bytes = u64Or(summary, "held_at_exit_bytes", 0);
    r.summary.held_at_exit_allocations = u64Or(summary, "held_at_exit_allocations", 0);
    if (auto held = root.find("held_at_exit")) {
        held->forEach([&](const Field& h) {
            HeldReport out;
            out.pid = u64(h, "pid");
            out.allocator = str(h, "allocator");
            out.bytes = u64(h, "bytes");
            out.allocations = u64(h, "allocations");
            out.sites = u64(h, "sites");
            h.at("top_sites").forEach([&](const Field& s) {
                out.top_sites.push_back(heldSiteOf(s));
            });
            r.held_at_exit.push_back(std::move(out));
        });
    }
    if (auto caching = root.find("caching_allocator")) {
        r.caching = cachingOf(*caching);
    }
}

} // namespace

Report fromJson(const Json& json) {
    if (!json.is_object() || !json.contains("schema_version")) {
        throw ReportFormatError("JSON but not a gpumemtrace report (no schema_version)");
    }
    const Field root(json, "");
    Report r;
    const Field version = root.at("schema_version");
    r.schema_version = version.i64();
    if (r.schema_version != kReportSchemaVersion) {
        version.fail("version " + std::to_string(r.schema_version) + " is not supported (this " +
                     "gpumemtrace reads version " + std::to_string(kReportSchemaVersion) + ")");
    }
    r.generator = str(root, "generator");
    root.at("processes").forEach([&](const Field& p) { r.processes.push_back(processOf(p)); });
    r.summary = summaryOf(root.at("summary"));
    const Field kinds = root.at("kinds");
    for (format::Kind k : kReportedKinds) {
        const Field kind = kinds.at(std::string(format::kindName(k)).c_str());
        r.kinds.push_back(KindReport{k, u64(kind, "allocations"), u64(kind, "peak_bytes"),
                                     u64(kind, "leaked_bytes"), u64(kind, "leaked_allocations")});
    }
    root.at("devices").forEach([&](const Field& d) {
        r.devices.push_back(DeviceReport{
            d.at("ordinal").i64(), str(d, "name"), u64(d, "total_bytes"), u64(d, "peak_bytes"),
            u64(d, "peak_time_ns"), u64(d, "leaked_bytes"), u64Or(d, "granularity", 0)});
    });
    root.at("leaks").forEach([&](const Field& l) { r.leaks.push_back(leakOf(l)); });
    r.leak_scope = scopeOf(r, root.find("leak_scope"));
    const Field peak = root.at("peak");
    r.peak.bytes = u64(peak, "bytes");
    r.peak.time_ns = u64(peak, "time_ns");
    peak.at("top_sites").forEach([&](const Field& s) {
        r.peak.top_sites.push_back(PeakSite{u64(s, "bytes"), u64(s, "allocations"),
                                            stackOf(s.at("stack")), u64Or(s, "pid", 0),
                                            u64Or(s, "stack_id", 0)});
    });
    detailOf(root, r);
    root.at("fragmentation").forEach([&](const Field& f) {
        r.fragmentation.push_back(fragmentationOf(f, r.stacks.size()));
    });
    root.at("failures").forEach([&](const Field& f) { r.failures.push_back(failureOf(f)); });
    root.at("errors").forEach([&](const Field& e) { r.errors.push_back(errorOf(e)); });
    root.at("timeline").forEach([&](const Field& t) { r.timeline.push_back(timelineOf(t)); });
    if (auto phases = root.find("phases")) {
        phases->forEach([&](const Field& p) { r.phases.push_back(phaseOf(p)); });
    }
    if (auto iterations = root.find("iterations")) {
        iterations->forEach([&](const Field& i) { r.iterations.push_back(iterationOf(i)); });
    }
    if (auto growth = root.find("growth")) {
        growth->forEach([&](const Field& g) { r.growth.push_back(growthOf(g)); });
    }
    r.growth_scope = growthScopeOf(r, root.find("growth_scope"));
    if (auto ranks = root.find("ranks")) {
        ranks->forEach([&](const Field& row) { r.ranks.push_back(rankOf(row)); });
    }
    frameworksOf(root, r);
    return r;
}

} // namespace gmt::analyzer
