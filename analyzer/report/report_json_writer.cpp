// toJson and writeJsonText: the typed Report -> JSON, as a tree or straight as text (one
// walk, two sinks: base/json_sink.h). The fields and their order are the field lists of
// model/report.h (GMT_DESCRIBE); this file holds only how each kind of value is written.
#include "report/report_json.h"
#include "report/whatif_json.h"

#include "base/hex.h"
#include "base/json_sink.h"
#include "base/text_safety.h"
#include "model/describe_members.h"

#include <type_traits>

namespace gmt::analyzer {

namespace {

template <typename T> struct IsOptional : std::false_type {};
template <typename T> struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T> struct IsVector : std::false_type {};
template <typename T> struct IsVector<std::vector<T>> : std::true_type {};

template <typename Sink> void writeFrame(const Frame& f, Sink& sink) {
    const bool python = f.language == FrameLanguage::Python;
    sink.beginObject();
    sink.key("address");
    sink.value(python ? std::string() : hex(f.address));
    sink.key("module");
    sink.value(validUtf8(f.module));
    sink.key("function");
    sink.value(validUtf8(f.function));
    sink.key("file");
    sink.value(validUtf8(f.file));
    sink.key("line");
    sink.value(f.line);
    sink.key("inlined");
    sink.value(f.inlined);
    sink.key("own");
    sink.value(f.own);
    if (f.offset && !python) {
        sink.key("offset");
        sink.value(hex(*f.offset));
    }
    sink.key("language");
    sink.value(python ? "python" : "native");
    sink.end();
}

// Walks the field lists, emitting into `sink`; every stack goes through `stack` when
// given (the HTML page's indices into its frame table), else as frame objects.
template <typename Sink> struct Writer {
    Sink& sink;
    const StackJson* stack;

    template <Described S> void object(const S& s) const {
        sink.beginObject();
        writeFields(s);
        sink.end();
    }
    template <Described S> void writeFields(const S& s) const;
    template <typename T> void value(const T& v, FieldCodec codec) const;
};

template <typename Sink> template <Described S> void Writer<Sink>::writeFields(const S& s) const {
    forEachMember(s, [&](const auto& field, const auto& v, const std::string& name, bool) {
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
        sink.key(name);
        value(v, field.codec);
    });
}

template <typename Sink>
template <typename T>
void Writer<Sink>::value(const T& v, FieldCodec codec) const {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> ||
                  (std::is_signed_v<T> && std::is_integral_v<T>)) {
        sink.value(v);
    } else if constexpr (std::is_integral_v<T>) {
        if (codec == FieldCodec::Hex) {
            sink.value(hex(v));
        } else {
            sink.value(v);
        }
    } else if constexpr (std::is_same_v<T, std::string>) {
        sink.value(validUtf8(v)); // strings from the trace may hold any bytes
    } else if constexpr (std::is_same_v<T, format::Kind>) {
        sink.value(format::kindName(v));
    } else if constexpr (std::is_same_v<T, format::PhaseKind>) {
        sink.value(format::phaseKindName(v));
    } else if constexpr (std::is_same_v<T, format::PythonStatus>) {
        sink.value(format::pythonStatusName(v));
    } else if constexpr (std::is_same_v<T, ErrorType>) {
        sink.value(errorTypeName(v));
    } else if constexpr (std::is_same_v<T, Moment>) {
        sink.value(codec == FieldCodec::CachingMoment && v == Moment::Failure ? "oom"
                                                                              : momentName(v));
    } else if constexpr (std::is_same_v<T, Stack>) {
        if (stack) {
            sink.value((*stack)(v));
        } else {
            sink.beginArray();
            for (const Frame& f : v) {
                writeFrame(f, sink);
            }
            sink.end();
        }
    } else if constexpr (std::is_same_v<T, std::vector<KindReport>>) {
        // An object with one member per kind, named by it.
        sink.beginObject();
        for (const KindReport& k : v) {
            sink.key(format::kindName(k.kind));
            object(k);
        }
        sink.end();
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<int64_t, uint64_t>>>) {
        sink.beginArray();
        for (const auto& [device, bytes] : v) {
            sink.value(codec == FieldCodec::DevicePeak
                           ? Json{{"device", device}, {"peak_bytes", bytes}}
                           : Json::array({device, bytes}));
        }
        sink.end();
    } else if constexpr (std::is_same_v<T, std::pair<uint64_t, uint64_t>>) {
        sink.value(Json::array({v.first, v.second}));
    } else if constexpr (IsOptional<T>::value) {
        if (v) {
            value(*v, codec);
        } else {
            sink.value(nullptr);
        }
    } else if constexpr (IsVector<T>::value) {
        sink.beginArray();
        for (const auto& item : v) {
            value(item, codec);
        }
        sink.end();
    } else {
        object(v);
    }
}

} // namespace

Json frameJson(const Frame& f) {
    JsonTreeSink sink;
    writeFrame(f, sink);
    return sink.take();
}

Json toJson(const Report& r) {
    JsonTreeSink sink;
    Writer<JsonTreeSink>{sink, nullptr}.object(r);
    return sink.take();
}

Json toJson(const Report& r, const StackJson& stack) {
    JsonTreeSink sink;
    Writer<JsonTreeSink>{sink, &stack}.object(r);
    return sink.take();
}

Json toJson(const WhatIfReport& r) {
    JsonTreeSink sink;
    Writer<JsonTreeSink>{sink, nullptr}.object(r);
    return sink.take();
}

void writeJsonText(const Report& r, std::string& out, int indent, const StackJson* stack,
                   const JsonTextSink::Drain& drain) {
    JsonTextSink sink(out, indent, drain);
    Writer<JsonTextSink>{sink, stack}.object(r);
}

void writeJsonText(const Report& r, OutputFile& file, int indent) {
    std::string out;
    writeJsonText(r, out, indent, nullptr, [&file](std::string_view text) { file.write(text); });
    out += '\n';
    file.write(out);
}

} // namespace gmt::analyzer
