// The recorder as an NVTX tool: NVTX range pushes and pops become nested phases
// (format::PhaseKind::Push/Pop), so a program annotated for Nsight needs no
// gpumemtrace-specific calls for its iterations to be seen.
//
// NVTX 3 is header-only: each library compiled with it carries its own copy of the NVTX
// functions, which call through a table of function pointers. On the first call, that
// copy loads the library named by NVTX_INJECTION64_PATH and calls its
// InitializeInjectionNvtx2, which fills in the table. Interposing nvtxRangePushA would
// see only programs linked against the old libnvToolsExt.so, so the recorder is an
// injection library instead: `gpumemtrace record` sets NVTX_INJECTION64_PATH to this
// library (already loaded through LD_PRELOAD, so dlopen returns the same copy). A user who
// already set the variable (another NVTX tool, e.g. Nsight Systems) keeps that tool.
//
// Only what phases need is attached: range push/pop (plain and per domain) and string
// registration (for messages given by a registered handle). NVTX leaves everything else a
// no-op, as it is without a tool. The one thing the program can see is the return value of
// push and pop: the range's nesting level, as NVTX documents for an attached tool, instead
// of "no tool" (-2).
#include "out_of_memory.h"
#include "recorder.h"

#include <gpumemtrace/format/record_limits.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

using gmt::format::PhaseKind;
using gmt::preload::Recorder;

namespace {

// Nesting level of this thread's open ranges: what push and pop return.
thread_local int t_depth = 0;

// The most of a name that a phase keeps, and its terminating NUL.
constexpr size_t kNameBytes = gmt::format::kMaxPhaseName;
using NameBuffer = char[kNameBytes + 1];

// `text` as UTF-8 in `out`, as many whole characters as fit in kNameBytes. Written into the
// caller's buffer, not a std::string: a range is pushed on the program's thread, where an
// allocation that fails for want of host memory would end the program (out_of_memory.h).
const char* utf8(const wchar_t* text, NameBuffer& out) {
    size_t n = 0;
    for (; text && *text; ++text) {
        const auto c = static_cast<uint32_t>(*text);
        const size_t bytes = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : c < 0x110000 ? 4 : 0;
        if (n + bytes > kNameBytes) {
            break;
        }
        // The lead byte carries the length in its high bits (none for one byte), then 6 bits
        // a byte; a value past Unicode's range (0 bytes) is left out.
        static constexpr uint8_t kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
        for (size_t i = 0; i < bytes; ++i) {
            const unsigned shift = 6 * static_cast<unsigned>(bytes - 1 - i);
            out[n + i] = static_cast<char>(i == 0 ? kLead[bytes] | (c >> shift)
                                                  : 0x80 | ((c >> shift) & 0x3F));
        }
        n += bytes;
    }
    out[n] = '\0';
    return out;
}

// The handle of a string that could not be kept for want of host memory: ranges pushed with
// it are named so, and the program runs on.
constexpr const char* kNotKept = "(a registered NVTX string: not kept, out of host memory)";

// Registered strings live as long as the process (NVTX has no unregister): each distinct
// text is kept once and its address is the handle.
const char* intern(std::string_view text) {
    static std::mutex mutex;
    const char* kept = kNotKept;
    gmt::preload::withoutThrowing([&] {
        std::lock_guard lock(mutex);
        static auto* strings = new std::unordered_set<std::string>;
        kept = strings->emplace(text).first->c_str();
    });
    return kept;
}

// The range's name: the message's own text, or its UTF-8 in `buffer`.
const char* messageOf(const nvtxEventAttributes_t* attributes, NameBuffer& buffer) {
    if (!attributes) {
        return "";
    }
    switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
    case NVTX_MESSAGE_TYPE_REGISTERED: // our handles are the interned text
        return attributes->message.ascii ? attributes->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
        return utf8(attributes->message.unicode, buffer);
    default:
        return "";
    }
}

int push(const char* name) {
    Recorder::instance().markPhase(*name ? name : "(unnamed range)", PhaseKind::Push);
    return t_depth++;
}

int NVTX_API rangePushA(const char* message) {
    return push(message ? message : "");
}
int NVTX_API rangePushW(const wchar_t* message) {
    NameBuffer buffer;
    return push(utf8(message, buffer));
}
int NVTX_API rangePushEx(const nvtxEventAttributes_t* attributes) {
    NameBuffer buffer;
    return push(messageOf(attributes, buffer));
}
int NVTX_API rangePop() {
    if (t_depth == 0) {
        return -1; // no open range: NVTX's error value, and nothing recorded
    }
    Recorder::instance().markPhase(nullptr, PhaseKind::Pop);
    return --t_depth;
}
int NVTX_API domainRangePushEx(nvtxDomainHandle_t, const nvtxEventAttributes_t* attributes) {
    return rangePushEx(attributes);
}
int NVTX_API domainRangePop(nvtxDomainHandle_t) {
    return rangePop();
}
nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t, const char* text) {
    return reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(
        intern(text ? std::string_view(text, strnlen(text, kNameBytes)) : std::string_view())));
}
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) {
    NameBuffer buffer;
    return reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(intern(utf8(text, buffer))));
}

template <typename F>
void attach(NvtxFunctionTable table, unsigned int size, unsigned int id, F* function) {
    if (table && id < size && table[id]) {
        *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
    }
}

} // namespace

extern "C" __attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
    // Not recording (GPUMEMTRACE_ENABLE=0): decline, and NVTX stays as without a tool.
    if (!get_export_table || !Recorder::instance().active()) {
        return 0;
    }
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        !callbacks->GetModuleFunctionTable) {
        return 0;
    }
    NvtxFunctionTable core = nullptr;
    unsigned int core_size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) {
        return 0;
    }
    attach(core, core_size, NVTX_CBID_CORE_RangePushA, &rangePushA);
    attach(core, core_size, NVTX_CBID_CORE_RangePushW, &rangePushW);
    attach(core, core_size, NVTX_CBID_CORE_RangePushEx, &rangePushEx);
    attach(core, core_size, NVTX_CBID_CORE_RangePop, &rangePop);
    NvtxFunctionTable core2 = nullptr;
    unsigned int core2_size = 0;
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size)) {
        attach(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domainRangePushEx);
        attach(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domainRangePop);
        attach(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &domainRegisterStringA);
        attach(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &domainRegisterStringW);
    }
    return 1;
}
