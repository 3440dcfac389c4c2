// fromJson: a saved JSON report -> the typed Report, strictly. The fields, and which are
// required, are the field lists of model/report.h (as docs/report.schema.json says, which
// tests/analyzer/report_fields_test.cpp checks); fields added since (optional there) read as
// their defaults when absent, so reports saved by earlier versions stay readable.
#include "report/report_json.h"

#include "base/saturating.h"
#include "model/describe_members.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>

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
    Field at(const std::string& key) const {
        requireObject();
        auto it = json_.find(key);
        if (it == json_.end()) {
            Field(json_, member(key)).fail("missing");
        }
        return Field(*it, member(key));
    }
    // An optional member: absent or null reads as absent.
    std::optional<Field> find(const std::string& key) const {
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
    std::string member(const std::string& key) const {
        return path_.empty() ? key : path_ + "." + key;
    }

    const Json& json_;
    std::string path_;
};

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
    frame.module = f.at("module").str();
    frame.function = f.at("function").str();
    frame.file = f.at("file").str();
    frame.line = f.at("line").i32();
    if (frame.line < 0) {
        f.at("line").fail("expected a line number >= 0");
    }
    frame.inlined = f.at("inlined").boolean();
    if (auto offset = f.find("offset")) {
        frame.offset = offset->hex();
    }
    if (auto own = f.find("own")) { // absent in reports of older versions: not own
        frame.own = own->boolean();
    }
    return frame;
}

Moment momentOf(const Field& f, FieldCodec codec) {
    const std::string m = f.str();
    if (codec == FieldCodec::CachingMoment) { // a caching allocator's: its peak or an OOM
        if (m == "peak") {
            return Moment::Peak;
        }
        if (m == "oom") {
            return Moment::Failure;
        }
        f.fail("expected \"peak\" or \"oom\"");
    }
    for (auto candidate : {Moment::Peak, Moment::Failure, Moment::End}) {
        if (momentName(candidate) == m) {
            return candidate;
        }
    }
    f.fail("expected \"peak\", \"failure\" or \"end\"");
}

ErrorType errorTypeOf(const Field& f) {
    const std::string t = f.str();
    for (auto candidate :
         {ErrorType::DoubleFree, ErrorType::InvalidFree, ErrorType::MismatchedFree}) {
        if (errorTypeName(candidate) == t) {
            return candidate;
        }
    }
    f.fail("expected \"double_free\", \"invalid_free\" or \"mismatched_free\"");
}

// ---- What a field list cannot say: defaults derived from other fields for reports saved
// before a field existed, and checks beyond a value's type. Called after the struct's
// listed fields are read.

template <typename S> void afterRead(S&, const Field&) {}

void afterRead(PhaseMarker& m, const Field& f) {
    if (!f.find("path") && (m.kind != format::PhaseKind::Pop || !m.name.empty())) {
        m.path = {m.name}; // saved before phases nested
    }
}

void afterRead(ProcessReport& p, const Field& f) {
    if (!f.find("end_mono_ns")) {
        p.end_mono_ns = p.start_mono_ns + p.duration_ns;
    }
}

void afterRead(FragmentationReport& r, const Field& f) {
    if (!f.find("hole_count")) {
        r.hole_count = r.holes.size();
    }
}

void afterRead(PhaseReport& p, const Field& f) {
    if (!f.find("path")) {
        p.path = {p.name}; // saved before phases nested
    }
}

void afterRead(IterationReport& it, const Field& f) {
    if (it.source != "phase" && it.source != "pattern" && it.source != "none") {
        f.at("source").fail("expected \"phase\", \"pattern\" or \"none\"");
    }
}

void afterRead(GrowthSite& g, const Field& f) {
    if (g.confidence < 0 || g.confidence > 1) {
        f.at("confidence").fail("expected a number from 0 to 1");
    }
}

void afterRead(KindTimelineReport& t, const Field& f) {
    const Field bytes = f.at("bytes");
    size_t i = 0;
    bytes.forEach([&](const Field& series) {
        if (t.bytes[i++].size() != t.time_ns.size()) {
            series.fail("expected as many values as time_ns has");
        }
    });
    if (t.bytes.size() != t.kinds.size()) {
        bytes.fail("expected one series per kind");
    }
}

void afterRead(SiteTimelineReport& t, const Field& f) {
    size_t i = 0;
    f.at("sites").forEach([&](const Field& site) {
        if (t.sites[i++].bytes.size() != t.time_ns.size()) {
            site.at("bytes").fail("expected as many values as time_ns has");
        }
    });
    if (t.other_bytes.size() != t.time_ns.size()) {
        f.at("other_bytes").fail("expected as many values as time_ns has");
    }
}

void afterRead(Report& r, const Field& root) {
    if (!root.find("leak_scope")) {
        // Saved before the scope existed: the whole report, nothing suppressed.
        r.leak_scope.bytes = r.summary.leaked_bytes;
        r.leak_scope.allocations = r.summary.leaked_allocations;
        r.leak_scope.sites = std::max<uint64_t>(r.summary.leak_groups, r.leaks.size());
    }
    if (!root.find("growth_scope")) { // saved before growth was measured: what is listed
        r.growth_scope.sites = r.growth.size();
        for (const GrowthSite& g : r.growth) {
            addSaturating(r.growth_scope.bytes_per_iteration, g.bytes_per_iteration);
        }
    }
}

template <typename T> struct IsOptional : std::false_type {};
template <typename T> struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T> struct IsVector : std::false_type {};
template <typename T> struct IsVector<std::vector<T>> : std::true_type {};

// Reads values by their C++ type and their list entry's codec.
class Reader {
  public:
    explicit Reader(size_t stacks) : stacks_(stacks) {}

    template <Described S> void fields(const Field& f, S& s, const std::string& prefix) const {
        forEachMember(
            s,
            [&](const auto& field, auto& v, const std::string& name, bool) {
                using M = std::decay_t<decltype(v)>;
                if constexpr (IsOptional<M>::value) {
                    if (field.required()) {
                        f.at(name); // required, may be null
                    }
                    if (auto member = f.find(name)) {
                        v = read<typename M::value_type>(*member, field.codec);
                    }
                } else if (field.required()) {
                    v = read<M>(f.at(name), field.codec);
                } else if (auto member = f.find(name)) { // absent or null: the default
                    v = read<M>(*member, field.codec);
                }
            },
            prefix);
    }

    template <typename T> T read(const Field& f, FieldCodec codec) const {
        if constexpr (std::is_same_v<T, bool>) {
            return f.boolean();
        } else if constexpr (std::is_same_v<T, double>) {
            return f.number();
        } else if constexpr (std::is_same_v<T, int64_t>) {
            return f.i64();
        } else if constexpr (std::is_same_v<T, uint32_t>) { // StackIndex: into stacks[]
            const uint64_t index = f.u64();
            if (index >= stacks_) {
                f.fail("no such entry in stacks[] (" + std::to_string(stacks_) + " entries)");
            }
            return static_cast<uint32_t>(index);
        } else if constexpr (std::is_same_v<T, uint64_t>) {
            return codec == FieldCodec::Hex ? f.hex() : f.u64();
        } else if constexpr (std::is_same_v<T, std::string>) {
            return f.str();
        } else if constexpr (std::is_same_v<T, format::Kind>) {
            return kindOf(f);
        } else if constexpr (std::is_same_v<T, format::PhaseKind>) {
            return phaseKindOf(f);
        } else if constexpr (std::is_same_v<T, format::PythonStatus>) {
            return pythonStatusOf(f);
        } else if constexpr (std::is_same_v<T, ErrorType>) {
            return errorTypeOf(f);
        } else if constexpr (std::is_same_v<T, Moment>) {
            return momentOf(f, codec);
        } else if constexpr (std::is_same_v<T, Frame>) {
            return frameOf(f);
        } else if constexpr (std::is_same_v<T, Stack>) {
            return Stack(read<std::vector<Frame>>(f, codec));
        } else if constexpr (std::is_same_v<T, std::vector<KindReport>>) {
            // One member per reported kind, named by it.
            T out;
            for (format::Kind k : kReportedKinds) {
                KindReport kind = read<KindReport>(f.at(std::string(format::kindName(k))), codec);
                kind.kind = k;
                out.push_back(std::move(kind));
            }
            return out;
        } else if constexpr (std::is_same_v<T, std::pair<int64_t, uint64_t>>) {
            if (codec != FieldCodec::DevicePeak) {
                f.fail("expected a device peak"); // no other such pair in a report
            }
            return {f.at("device").i64(), f.at("peak_bytes").u64()};
        } else if constexpr (std::is_same_v<T, std::pair<uint64_t, uint64_t>>) {
            std::vector<uint64_t> pair;
            f.forEach([&](const Field& v) { pair.push_back(v.u64()); });
            if (pair.size() != 2) {
                f.fail("expected [time_ns, bytes]");
            }
            return {pair[0], pair[1]};
        } else if constexpr (IsVector<T>::value) {
            T out;
            f.forEach([&](const Field& item) {
                out.push_back(read<typename T::value_type>(item, codec));
            });
            return out;
        } else {
            T out;
            fields(f, out, "");
            afterRead(out, f);
            return out;
        }
    }

  private:
    size_t stacks_; // entries of the report's stacks[], which StackRefs index
};

} // namespace

Report fromJson(const Json& json) {
    if (!json.is_object() || !json.contains("schema_version")) {
        throw ReportFormatError("JSON but not a gpumemtrace report (no schema_version)");
    }
    const Field root(json, "");
    const Field version = root.at("schema_version");
    const int64_t schema_version = version.i64();
    if (schema_version != kReportSchemaVersion) {
        version.fail("version " + std::to_string(schema_version) + " is not supported (this " +
                     "gpumemtrace reads version " + std::to_string(kReportSchemaVersion) + ")");
    }
    const auto stacks = json.find("stacks");
    return Reader(stacks != json.end() && stacks->is_array() ? stacks->size() : 0)
        .read<Report>(root, FieldCodec::Value);
}

} // namespace gmt::analyzer
