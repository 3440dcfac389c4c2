// toJson: the typed Report -> JSON. The fields and their order are the field lists of
// model/report.h (GMT_DESCRIBE); this file holds only how each kind of value is written.
#include "report/report_json.h"

#include "base/hex.h"
#include "base/text_safety.h"
#include "model/describe_members.h"

#include <type_traits>

namespace gmt::analyzer {

namespace {

template <typename T> struct IsOptional : std::false_type {};
template <typename T> struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T> struct IsVector : std::false_type {};
template <typename T> struct IsVector<std::vector<T>> : std::true_type {};

} // namespace

Json frameJson(const Frame& f) {
    const bool python = f.language == FrameLanguage::Python;
    Json j{{"address", python ? std::string() : hex(f.address)},
           {"module", validUtf8(f.module)},
           {"function", validUtf8(f.function)},
           {"file", validUtf8(f.file)},
           {"line", f.line},
           {"inlined", f.inlined},
           {"own", f.own}};
    if (f.offset && !python) {
        j["offset"] = hex(*f.offset);
    }
    j["language"] = f.language == FrameLanguage::Python ? "python" : "native";
    return j;
}

namespace {

Json frameObjects(const Stack& stack) {
    Json out = Json::array();
    for (const Frame& f : stack) {
        out.push_back(frameJson(f));
    }
    return out;
}

// Walks the field lists; every stack goes through `stack` (frame objects, or the HTML
// page's indices into its frame table).
struct Writer {
    const StackJson& stack;

    template <Described S> void writeFields(const S& s, Json& out, const std::string& prefix) const;
    template <Described S> Json object(const S& s) const {
        Json out = Json::object();
        writeFields(s, out, "");
        return out;
    }
    template <typename T> Json value(const T& v, FieldCodec codec) const;
};

template <Described S>
void Writer::writeFields(const S& s, Json& out, const std::string& prefix) const {
    forEachMember(
        s,
        [&](const auto& field, const auto& v, const std::string& name, bool) {
            using M = std::decay_t<decltype(v)>;
            if (field.has(kOmitted)) {
                if constexpr (IsOptional<M>::value) {
                    if (!v) {
                        return;
                    }
                } else if constexpr (std::is_same_v<M, bool>) {
                    if (!v) {
                        return;
                    }
                }
            }
            out[name] = value(v, field.codec);
        },
        prefix);
}

template <typename T> Json Writer::value(const T& v, FieldCodec codec) const {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> ||
                  (std::is_signed_v<T> && std::is_integral_v<T>)) {
        return v;
    } else if constexpr (std::is_integral_v<T>) {
        return codec == FieldCodec::Hex ? Json(hex(v)) : Json(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
        return validUtf8(v); // strings from the trace may hold any bytes
    } else if constexpr (std::is_same_v<T, format::Kind>) {
        return format::kindName(v);
    } else if constexpr (std::is_same_v<T, format::PhaseKind>) {
        return format::phaseKindName(v);
    } else if constexpr (std::is_same_v<T, format::PythonStatus>) {
        return format::pythonStatusName(v);
    } else if constexpr (std::is_same_v<T, ErrorType>) {
        return errorTypeName(v);
    } else if constexpr (std::is_same_v<T, Moment>) {
        if (codec == FieldCodec::CachingMoment && v == Moment::Failure) {
            return "oom";
        }
        return momentName(v);
    } else if constexpr (std::is_same_v<T, Stack>) {
        return stack(v);
    } else if constexpr (std::is_same_v<T, std::vector<KindReport>>) {
        // An object with one member per kind, named by it.
        Json out = Json::object();
        for (const KindReport& k : v) {
            out[std::string(format::kindName(k.kind))] = object(k);
        }
        return out;
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<int64_t, uint64_t>>>) {
        Json out = Json::array();
        for (const auto& [device, bytes] : v) {
            out.push_back(codec == FieldCodec::DevicePeak
                              ? Json{{"device", device}, {"peak_bytes", bytes}}
                              : Json::array({device, bytes}));
        }
        return out;
    } else if constexpr (std::is_same_v<T, std::pair<uint64_t, uint64_t>>) {
        return Json::array({v.first, v.second});
    } else if constexpr (IsOptional<T>::value) {
        return v ? value(*v, codec) : Json(nullptr);
    } else if constexpr (IsVector<T>::value) {
        Json out = Json::array();
        for (const auto& item : v) {
            out.push_back(value(item, codec));
        }
        return out;
    } else {
        return object(v);
    }
}

} // namespace

Json toJson(const Report& r) {
    return toJson(r, frameObjects);
}

Json toJson(const Report& r, const StackJson& stack) {
    return Writer{stack}.object(r);
}

} // namespace gmt::analyzer
