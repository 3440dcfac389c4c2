#include "analysis/whatif/request_stream.h"

#include "read/trace_reader.h"

#include <gpumemtrace/format/event.h>

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

namespace gmt::analyzer {

namespace {

using format::BlockAction;
using format::Event;
using format::Op;

// One device's requests as they are read.
class DeviceRequests {
  public:
    explicit DeviceRequests(int device, RequestSource source) {
        out_.device = device;
        out_.source = source;
    }

    void onBlock(const Event& e) {
        if (inPrivatePool(e)) {
            ++out_.private_pool_events;
            return;
        }
        const auto action = static_cast<BlockAction>(e.api);
        switch (action) {
        case BlockAction::Alloc:
            endReleaseRun(e.time_ns);
            alloc(e);
            break;
        case BlockAction::FreeRequested:
            endReleaseRun(e.time_ns);
            freeRequested(e);
            break;
        case BlockAction::FreeCompleted:
            endReleaseRun(e.time_ns);
            freeCompleted(e, last_requested_ == e.address);
            break;
        case BlockAction::SegmentAlloc:
        case BlockAction::SegmentMap:
            ++out_.recorded.segment_allocs;
            reserved_ += e.size;
            out_.recorded.peak_reserved_bytes =
                std::max(out_.recorded.peak_reserved_bytes, reserved_);
            if (releasing_) {
                // Segments given back and a new one taken before the block: the allocator
                // made room inside one allocation.
                releasing_ = false;
                ++out_.pressure_releases;
            }
            break;
        case BlockAction::SegmentFree:
        case BlockAction::SegmentUnmap:
            ++out_.recorded.segment_frees;
            reserved_ -= std::min(reserved_, e.size);
            if (!releasing_) {
                releasing_ = true;
                release_time_ = e.time_ns;
            }
            break;
        case BlockAction::Oom:
            if (out_.recorded.ooms++ == 0) {
                out_.recorded.oom_capacity_bytes = reserved_ + e.device_free;
            }
            if (releasing_) {
                releasing_ = false;
                ++out_.pressure_releases;
            }
            if (e.size > kMaxRequestBytes) {
                ++out_.oversized_requests;
            } else {
                push(RequestKind::Attempt, e, 0, e.size, streamIndex(e.stream));
            }
            break;
        }
        last_requested_ = action == BlockAction::FreeRequested ? e.address : kNone;
    }

    // A cudaMalloc (or cuMemAlloc, cudaMallocAsync) of the program's own.
    void onCudaAlloc(const Event& e) {
        alloc(e);
        ++out_.recorded.segment_allocs;
        reserved_ += e.size;
        out_.recorded.peak_reserved_bytes = std::max(out_.recorded.peak_reserved_bytes, reserved_);
    }
    void onCudaFree(const Event& e) {
        auto it = live_.find(e.address);
        if (it == live_.end()) {
            return; // not one of the device allocations replayed
        }
        const uint64_t bytes = it->second.size;
        freeRequested(e);
        freeCompleted(e, true);
        ++out_.recorded.segment_frees;
        reserved_ -= std::min(reserved_, bytes);
    }
    bool owns(uint64_t address) const { return live_.count(address) != 0; }
    size_t requests() const { return out_.requests.size(); }

    RequestStream finish(uint64_t end_ns) {
        endReleaseRun(end_ns);
        return std::move(out_);
    }

  private:
    static constexpr uint64_t kNone = ~uint64_t{0};
    struct Live {
        uint32_t id = 0;
        uint64_t size = 0;
    };

    uint32_t streamIndex(uint64_t handle) {
        auto [it, added] = stream_index_.try_emplace(handle, uint32_t(out_.streams.size()));
        if (added) {
            out_.streams.push_back(handle);
        }
        return it->second;
    }

    void push(RequestKind kind, const Event& e, uint32_t id, uint64_t size, uint32_t stream) {
        Request r;
        r.time_ns = e.time_ns;
        r.size = size;
        r.id = id;
        r.stack = e.stack_id;
        r.stream = stream;
        r.kind = kind;
        out_.requests.push_back(r);
    }

    void alloc(const Event& e) {
        if (out_.allocations == UINT32_MAX - 1) {
            return; // ids are 32-bit: more than 4 billion allocations are not replayed
        }
        if (e.size > kMaxRequestBytes) {
            ++out_.oversized_requests; // its free, if any, counts as unmatched
            return;
        }
        const uint32_t id = out_.allocations++;
        const uint32_t stream = streamIndex(e.stream);
        // An address allocated again without a free: the old allocation's free is missing.
        live_[e.address] = {id, e.size};
        streams_of_[id] = stream;
        push(RequestKind::Alloc, e, id, e.size, stream);
    }
    void freeRequested(const Event& e) {
        auto it = live_.find(e.address);
        if (it == live_.end()) {
            ++out_.unmatched_frees;
            return;
        }
        push(RequestKind::FreeRequested, e, it->second.id, 0, streams_of_[it->second.id]);
        requested_[e.address] = it->second.id;
        live_.erase(it);
    }
    void freeCompleted(const Event& e, bool at_once) {
        auto it = requested_.find(e.address);
        if (it == requested_.end()) {
            ++out_.unmatched_frees;
            return;
        }
        if (!at_once) {
            ++out_.deferred_frees;
        }
        const uint32_t id = it->second;
        push(RequestKind::FreeCompleted, e, id, 0, streams_of_[id]);
        streams_of_.erase(id);
        requested_.erase(it);
    }
    // Segments given back with no new one after them, before the next block: the program
    // emptied the cache.
    void endReleaseRun(uint64_t) {
        if (!releasing_) {
            return;
        }
        releasing_ = false;
        Request r;
        r.time_ns = release_time_;
        r.kind = RequestKind::Release;
        out_.requests.push_back(r);
    }

    RequestStream out_;
    std::unordered_map<uint64_t, Live> live_;          // allocated, by address
    std::unordered_map<uint64_t, uint32_t> requested_; // freed, not yet reusable
    std::unordered_map<uint32_t, uint32_t> streams_of_;
    std::unordered_map<uint64_t, uint32_t> stream_index_;
    uint64_t reserved_ = 0;
    uint64_t last_requested_ = kNone;
    bool releasing_ = false;
    uint64_t release_time_ = 0;
};

} // namespace

TraceRequests readRequests(const std::string& path, uint64_t max_requests) {
    TraceRequests out;
    out.path = path;
    TraceReader reader(path);
    auto record = std::make_unique<Record>();
    std::map<int, std::unique_ptr<DeviceRequests>> blocks, calls;
    auto deviceOf = [](std::map<int, std::unique_ptr<DeviceRequests>>& m, int device,
                       RequestSource source) -> DeviceRequests& {
        auto& d = m[device];
        if (!d) {
            d = std::make_unique<DeviceRequests>(device, source);
        }
        return *d;
    };
    uint64_t last_ns = 0;
    // Requests held so far, counted every 4096 events: a cheap bound on what is stored.
    auto held = [&] {
        uint64_t n = 0;
        for (const auto* m : {&blocks, &calls}) {
            for (const auto& [device, d] : *m) {
                n += d->requests();
            }
        }
        return n;
    };
    uint64_t events = 0;
    while (reader.next(*record)) {
        if ((++events & 4095) == 0 && held() > max_requests) {
            break;
        }
        switch (record->tag) {
        case format::RecordTag::Header:
            out.pid = record->header.pid;
            break;
        case format::RecordTag::Device:
            out.device_total_bytes.emplace_back(record->device.ordinal, record->device.total_bytes);
            break;
        case format::RecordTag::CachingAllocator: {
            const auto& info = record->caching_allocator;
            out.config = info.config;
            out.attached = info.status == format::CachingAllocatorStatus::Attached;
            // The recorder names another backend only in its sentence of why it did not attach.
            out.backend = out.attached ? "native"
                          : info.detail.find("cudaMallocAsync") != std::string::npos
                              ? "cudaMallocAsync"
                              : "";
            break;
        }
        case format::RecordTag::Event: {
            const Event& e = record->event;
            last_ns = std::max(last_ns, e.time_ns);
            if (e.op == Op::Block) {
                deviceOf(blocks, e.device, RequestSource::PyTorchBlocks).onBlock(e);
            } else if (cudaDeviceAlloc(e)) {
                deviceOf(calls, e.device, RequestSource::CudaCalls).onCudaAlloc(e);
            } else if (e.op == Op::Free) {
                auto it = calls.find(e.device);
                if (it != calls.end()) {
                    it->second->onCudaFree(e);
                } else {
                    // A free may carry no device: the device whose allocation it is.
                    for (auto& [device, d] : calls) {
                        if (d->owns(e.address)) {
                            d->onCudaFree(e);
                            break;
                        }
                    }
                }
            }
            break;
        }
        default:
            break;
        }
    }
    out.requests_held = held();
    if (out.requests_held > max_requests) {
        out.too_many_requests = true;
        out.source_held = blocks.empty() ? RequestSource::CudaCalls : RequestSource::PyTorchBlocks;
        return out; // nothing to replay: the caller says why
    }
    const ReadStatus& status = reader.status();
    out.complete = status.complete && status.dropped_events == 0 && status.missing_positions == 0;
    if (!out.complete) {
        out.incomplete = status.dropped_events > 0 || status.missing_positions > 0
                             ? "events are missing from the trace"
                             : status.incompleteReason();
    }
    // Block events are the tensor level: where a device has them, its cudaMalloc calls are
    // the allocator's own segments, not requests.
    auto& chosen = blocks.empty() ? calls : blocks;
    for (auto& [device, d] : chosen) {
        out.devices.push_back(d->finish(last_ns));
    }
    return out;
}

} // namespace gmt::analyzer
