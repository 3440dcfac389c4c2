#include "driver_state.h"

#include "constants.h"
#include "host_memory.h"

#include <cstdio>

namespace cudasim {

namespace {

constexpr uint64_t kTiB = 1ull << 40;
// Where the simulated address space should end, so that device pointers look like the
// 0x7f... addresses CUDA hands out on Linux.
constexpr uint64_t kPreferredEnd = 0x7f0000000000ull;
constexpr uint64_t kVmmSpan = 4 * kTiB;

} // namespace

Driver& Driver::instance() {
    // Never destroyed: programs (and tracers) call the driver from atexit handlers and from
    // threads that outlive main().
    static Driver* driver = new Driver();
    return *driver;
}

CUresult Driver::init(unsigned flags) {
    if (flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (init_result_ != CUDA_ERROR_NOT_INITIALIZED) {
        return init_result_;
    }
    config_ = read_config_from_environment();
    if (config_.devices == 0) {
        init_result_ = CUDA_ERROR_NO_DEVICE;
        return init_result_;
    }
    // Every device gets a slot at least twice its capacity, so that fragmentation never runs
    // out of addresses before it runs out of memory; VMM reservations get their own slot.
    uint64_t device_span = align_up(2 * config_.capacity, kTiB);
    uint64_t total = device_span * config_.devices + kVmmSpan;
    uint64_t hint = total < kPreferredEnd ? kPreferredEnd - total : 0;
    auto base = host_memory::reserve_address_space(total, 1ull << 30, hint);
    if (!base) {
        std::fprintf(stderr, "[cudasim] cannot reserve %llu bytes of address space\n",
                     static_cast<unsigned long long>(total));
        init_result_ = CUDA_ERROR_OPERATING_SYSTEM;
        return init_result_;
    }
    for (int d = 0; d < config_.devices; ++d) {
        devices_.push_back(std::make_unique<DeviceMemory>(d, *base + d * device_span, device_span,
                                                          config_.capacity));
        auto* pool = new CUmemPoolHandle_st(d, /*is_default=*/true, /*max_size=*/0);
        default_pools_.push_back(pool);
        current_pools_.push_back(pool);
        pools.insert(pool);
    }
    vmm.init(*base + config_.devices * device_span, kVmmSpan);
    contexts.init(config_.devices);
    initialized_ = true;
    init_result_ = CUDA_SUCCESS;
    return init_result_;
}

CUresult Driver::check_device(CUdevice device) const {
    if (!initialized_) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    return device >= 0 && device < device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult Driver::current_context(CUcontext* out) {
    if (!initialized_) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    return contexts.current(out);
}

std::map<uint64_t, DeviceAllocation>::iterator Driver::find_device_allocation(uint64_t addr) {
    auto it = device_allocations.upper_bound(addr);
    if (it == device_allocations.begin()) {
        return device_allocations.end();
    }
    --it;
    return addr - it->first < it->second.requested ? it : device_allocations.end();
}

std::map<uint64_t, HostAllocation>::iterator Driver::find_host_allocation(uint64_t addr) {
    auto it = host_allocations.upper_bound(addr);
    if (it == host_allocations.begin()) {
        return host_allocations.end();
    }
    --it;
    return addr - it->first < it->second.size ? it : host_allocations.end();
}

void Driver::free_device_allocation(std::map<uint64_t, DeviceAllocation>::iterator it) {
    DeviceAllocation& allocation = it->second;
    if (allocation.kind == AllocKind::Pool) {
        allocation.pool->free(allocation.block, allocation.requested);
        finish_pool_if_unused(allocation.pool);
    } else {
        memory(allocation.device).release(allocation.block);
    }
    device_allocations.erase(it);
}

void Driver::free_host_allocation(std::map<uint64_t, HostAllocation>::iterator it) {
    if (!it->second.registered) {
        host_memory::free_pinned(reinterpret_cast<void*>(it->first), it->second.size);
    }
    host_allocations.erase(it);
}

void Driver::destroy_array(CUarray array) {
    memory(array->device).release(array->block);
    arrays.erase(array);
    delete array;
}

void Driver::destroy_mipmapped_array(CUmipmappedArray array) {
    memory(array->device).release(array->block);
    mipmapped_arrays.erase(array);
    delete array;
}

bool Driver::is_valid_stream(CUstream stream) const {
    return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD ||
           streams.contains(stream);
}

CUresult Driver::stream_device(CUstream stream, int* device) {
    if (!is_valid_stream(stream)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (streams.contains(stream)) {
        *device = stream->device;
        return CUDA_SUCCESS;
    }
    CUcontext ctx = nullptr;
    CUresult result = current_context(&ctx);
    if (result == CUDA_SUCCESS) {
        *device = ctx->device;
    }
    return result;
}

void Driver::destroy_pool(CUmemoryPool pool) {
    pools.erase(pool);
    if (current_pools_[pool->device()] == pool) {
        current_pools_[pool->device()] = default_pools_[pool->device()];
    }
    dying_pools_.insert(pool);
    finish_pool_if_unused(pool);
}

void Driver::finish_pool_if_unused(CUmemoryPool pool) {
    if (!dying_pools_.contains(pool) || pool->live_allocations() > 0) {
        return;
    }
    pool->release_unused(memory(pool->device()), 0);
    dying_pools_.erase(pool);
    delete pool;
}

void Driver::on_synchronize(int device) {
    for (CUmemoryPool pool : pools) {
        if (pool->device() == device) {
            pool->release_on_synchronize(memory(device));
        }
    }
}

void Driver::teardown(CUcontext ctx) {
    for (auto it = device_allocations.begin(); it != device_allocations.end();) {
        auto next = std::next(it);
        if (it->second.ctx == ctx && it->second.kind != AllocKind::Pool) {
            free_device_allocation(it);
        }
        it = next;
    }
    for (auto it = host_allocations.begin(); it != host_allocations.end();) {
        auto next = std::next(it);
        if (it->second.ctx == ctx) {
            free_host_allocation(it);
        }
        it = next;
    }
    // Collect first: destroying erases from the set being walked.
    std::vector<CUarray> owned_arrays;
    for (CUarray array : arrays) {
        if (array->ctx == ctx) {
            owned_arrays.push_back(array);
        }
    }
    for (CUarray array : owned_arrays) {
        destroy_array(array);
    }
    std::vector<CUmipmappedArray> owned_mipmapped;
    for (CUmipmappedArray array : mipmapped_arrays) {
        if (array->ctx == ctx) {
            owned_mipmapped.push_back(array);
        }
    }
    for (CUmipmappedArray array : owned_mipmapped) {
        destroy_mipmapped_array(array);
    }
    std::erase_if(streams, [ctx](CUstream stream) {
        if (stream->ctx != ctx) {
            return false;
        }
        delete stream;
        return true;
    });
    std::erase_if(events, [ctx](CUevent event) {
        if (event->ctx != ctx) {
            return false;
        }
        delete event;
        return true;
    });
}

} // namespace cudasim
