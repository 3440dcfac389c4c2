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
#include "recorder.h"

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <mutex>
#include <string>
#include <unordered_set>

using gmt::format::PhaseKind;
using gmt::preload::Recorder;

namespace {

// Nesting level of this thread's open ranges: what push and pop return.
thread_local int t_depth = 0;

std::string utf8(const wchar_t* text) {
    std::string out;
    for (; text && *text && out.size() < 4096; ++text) {
        auto c = static_cast<uint32_t>(*text);
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x110000) {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return out;
}

// Registered strings live as long as the process (NVTX has no unregister): each distinct
// text is kept once and its address is the handle.
const char* intern(std::string text) {
    static std::mutex mutex;
    static auto* strings = new std::unordered_set<std::string>;
    std::lock_guard lock(mutex);
    return strings->insert(std::move(text)).first->c_str();
}

std::string messageOf(const nvtxEventAttributes_t* attributes) {
    if (!attributes) {
        return {};
    }
    switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
    case NVTX_MESSAGE_TYPE_REGISTERED: // our handles are the interned text
        return attributes->message.ascii ? attributes->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
        return utf8(attributes->message.unicode);
    default:
        return {};
    }
}

int push(const std::string& name) {
    Recorder::instance().markPhase(name.empty() ? "(unnamed range)" : name.c_str(),
                                   PhaseKind::Push);
    return t_depth++;
}

int NVTX_API rangePushA(const char* message) {
    return push(message ? message : "");
}
int NVTX_API rangePushW(const wchar_t* message) {
    return push(utf8(message));
}
int NVTX_API rangePushEx(const nvtxEventAttributes_t* attributes) {
    return push(messageOf(attributes));
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
    return reinterpret_cast<nvtxStringHandle_t>(
        const_cast<char*>(intern(text ? std::string(text, strnlen(text, 4096)) : "")));
}
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) {
    return reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(intern(utf8(text))));
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
