#include "torch_caching_allocator.h"

#include "../event_clock.h"
#include "../logging.h"
#include "../real_functions.h"
#include "torch_abi.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <functional>
#include <string>
#include <string_view>
#include <unistd.h>

namespace gmt::preload::frameworks {

// name() returns a std::string PyTorch built: the rows of torch_abi.cpp are of wheels built
// with the C++11 string ABI, which this library must use too.
static_assert(_GLIBCXX_USE_CXX11_ABI == 1, "PyTorch's std::string is the C++11 ABI's");

namespace {

// The mangled name of c10::cuda::CUDACachingAllocator::allocator, a
// std::atomic<CUDAAllocator*> (an atomic pointer is a plain pointer in memory on x86-64).
constexpr char kAllocatorSymbol[] = "_ZN3c104cuda20CUDACachingAllocator9allocatorE";
constexpr std::string_view kLibrary = "/libc10_cuda.so";

// TraceEntry, opaque: its fields are read at the offsets of the version's row.
struct TraceEntry;
using Tracker = std::function<void(const TraceEntry&)>;

// Read by the tracker on every event; set once, before the tracker is attached.
const TorchAbi* g_abi = nullptr;
TorchCachingAllocator::RecordFn g_record = nullptr;

template <typename T> T field(const TraceEntry& entry, size_t offset) {
    T v;
    std::memcpy(&v, reinterpret_cast<const char*>(&entry) + offset, sizeof v);
    return v;
}

// Runs on the thread that made the allocator act, with the allocator's lock held: it must
// take no lock the allocator's callers may hold (the GIL, ...) and call nothing of PyTorch.
void onTraceEntry(const TraceEntry& entry) {
    const TorchAbi& abi = *g_abi;
    const auto action = field<int32_t>(entry, abi.action_offset);
    if (action < 0 || static_cast<size_t>(action) >= TorchAbi::kActions ||
        abi.actions[action] == static_cast<format::BlockAction>(0)) {
        return;
    }
    format::Event e;
    e.op = format::Op::Block;
    e.api = static_cast<format::Api>(abi.actions[action]);
    e.kind = format::Kind::Block;
    e.flags = static_cast<uint32_t>(format::BlockSource::PyTorch);
    e.device = field<int8_t>(entry, abi.device_offset);
    e.stream = field<uint64_t>(entry, abi.stream_offset);
    e.size = field<uint64_t>(entry, abi.size_offset);
    e.handle = field<uint64_t>(entry, abi.pool_offset);
    e.offset = field<uint64_t>(entry, abi.pool_offset + 8);
    const uint64_t addr = field<uint64_t>(entry, abi.addr_offset);
    if (abi.actions[action] == format::BlockAction::Oom) {
        e.device_free = addr; // TraceEntry keeps the free bytes there for an OOM
    } else {
        e.address = addr;
    }
    g_record(e);
}

// `__version__ = '2.11.0+cu130'` from <torch>/version.py, the torch folder being the parent of
// the lib/ folder that holds libc10_cuda.so. Empty when it cannot be read.
void readVersion(const char* library, char* out, size_t size) {
    std::string dir(library);
    for (int up = 0; up < 2; ++up) {
        const size_t slash = dir.rfind('/');
        if (slash == std::string::npos) {
            return;
        }
        dir.resize(slash);
    }
    const int fd = ::open((dir + "/version.py").c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return;
    }
    char text[4096];
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) {
        return;
    }
    std::string_view s(text, static_cast<size_t>(n));
    // The assignment, not an earlier mention: PyTorch's version.py lists '__version__' in
    // __all__ first.
    size_t at = 0;
    for (;; at += 11) {
        at = s.find("__version__", at);
        if (at == std::string_view::npos) {
            return;
        }
        const size_t equals = s.find_first_not_of(" \t", at + 11);
        if (equals != std::string_view::npos && s[equals] == '=') {
            break;
        }
    }
    const size_t open = s.find_first_of("'\"", at);
    if (open == std::string_view::npos) {
        return;
    }
    const size_t close = s.find(s[open], open + 1);
    if (close == std::string_view::npos || close - open - 1 >= size) {
        return;
    }
    std::memcpy(out, s.data() + open + 1, close - open - 1);
    out[close - open - 1] = '\0';
}

// The allocator's settings as the process's environment gives them (the analysis applies
// PyTorch's rounding and splitting rules with them).
std::string allocatorConfig() {
    std::string out;
    for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
        if (const char* v = std::getenv(name)) {
            out += std::string(name) + "=" + v + "\n";
        }
    }
    return out.substr(0, format::kMaxCachingAllocatorConfig);
}

} // namespace

void TorchCachingAllocator::start(bool enabled, RecordFn record, ReportFn report) {
    enabled_ = enabled;
    record_ = record;
    report_ = report;
}

void TorchCachingAllocator::noticeModule(const format::ModuleInfo& module) {
    const std::string_view path(module.path);
    if (state_.load(std::memory_order_relaxed) != kWatching || path.size() < kLibrary.size() ||
        path.substr(path.size() - kLibrary.size()) != kLibrary || path.size() >= sizeof path_) {
        return;
    }
    std::memcpy(path_, path.data(), path.size());
    path_[path.size()] = '\0';
    module_start_ = module.start;
    module_end_ = module.end;
    if (!enabled_) {
        state_.store(kDone, std::memory_order_release);
        readVersion(path_, version_, sizeof version_);
        giveUp(format::CachingAllocatorStatus::Disabled, "GPUMEMTRACE_CACHING_ALLOCATOR=0");
        return;
    }
    state_.store(kFound, std::memory_order_release);
}

void TorchCachingAllocator::giveUp(format::CachingAllocatorStatus status, const char* detail) {
    state_.store(kDone, std::memory_order_release);
    format::CachingAllocatorInfo info;
    info.status = status;
    info.time_ns = EventClock::now();
    info.version = version_;
    info.detail = detail;
    info.config = allocatorConfig();
    logger().info("PyTorch's caching allocator: no block events ({})", detail);
    report_(info);
}

// Finds the allocator's symbol (libc10_cuda.so is loaded RTLD_LOCAL by Python, so not
// through RTLD_DEFAULT: by its path, without loading anything) and the version's row.
bool TorchCachingAllocator::resolve() {
    if (resolved_) {
        return true;
    }
    readVersion(path_, version_, sizeof version_);
    abi_ = torchAbiFor(version_);
    if (!abi_) {
        giveUp(format::CachingAllocatorStatus::UnknownVersion,
               version_[0] ? "this PyTorch version's allocator layout is not known to the "
                             "recorder"
                           : "torch/version.py was not found next to libc10_cuda.so");
        return false;
    }
    void* handle = ::dlopen(path_, RTLD_NOLOAD | RTLD_LAZY);
    allocator_symbol_ = handle ? realDlsym(handle, kAllocatorSymbol) : nullptr;
    if (handle) {
        ::dlclose(handle);
    }
    if (!allocator_symbol_) {
        giveUp(format::CachingAllocatorStatus::Failed,
               "c10::cuda::CUDACachingAllocator::allocator not found in libc10_cuda.so");
        return false;
    }
    resolved_ = true;
    return true;
}

void TorchCachingAllocator::attempt() {
    if (busy_.test_and_set(std::memory_order_acquire)) {
        return; // another thread is at it; this one goes on
    }
    if (state_.load(std::memory_order_acquire) == kFound && resolve()) {
        void* allocator = *static_cast<void* volatile*>(allocator_symbol_);
        void** vtable = allocator ? *static_cast<void***>(allocator) : nullptr;
        auto inModule = [this](void* fn) {
            const auto a = reinterpret_cast<uint64_t>(fn);
            return a >= module_start_ && a < module_end_;
        };
        if (!vtable) {
            // Not set yet (before the allocator's static initialisation): later.
        } else if (!inModule(vtable[abi_->initialized_slot]) ||
                   !inModule(vtable[abi_->attach_slot]) || !inModule(vtable[abi_->name_slot])) {
            // Another backend (a pluggable allocator from another library), or not the
            // layout the row says: calling into it could do anything.
            giveUp(format::CachingAllocatorStatus::OtherBackend,
                   "the allocator's methods are not libc10_cuda.so's native caching allocator");
        } else {
            auto name = reinterpret_cast<std::string (*)(void*)>(vtable[abi_->name_slot]);
            const std::string backend = name(allocator);
            if (backend != "native") {
                giveUp(format::CachingAllocatorStatus::OtherBackend,
                       ("the allocator backend is " + backend + ", not native").c_str());
            } else if (reinterpret_cast<bool (*)(void*)>(vtable[abi_->initialized_slot])(
                           allocator)) {
                g_abi = abi_;
                g_record = record_;
                auto attach = reinterpret_cast<void (*)(void*, Tracker)>(vtable[abi_->attach_slot]);
                attach(allocator, Tracker(&onTraceEntry));
                state_.store(kDone, std::memory_order_release);
                format::CachingAllocatorInfo info;
                info.status = format::CachingAllocatorStatus::Attached;
                info.time_ns = EventClock::now();
                info.version = version_;
                info.detail = "native";
                info.config = allocatorConfig();
                logger().info("PyTorch {} caching allocator: recording its block events", version_);
                report_(info);
            }
            // Not initialized yet: its per-device allocators do not exist; later.
        }
    }
    busy_.clear(std::memory_order_release);
}

} // namespace gmt::preload::frameworks
