// The simulated driver's process-wide state and the operations several API families share.
//
// One mutex guards everything: the simulator is a test double, and a single lock makes every
// API call atomic, which is what tests of concurrent allocation need to be meaningful.
#pragma once

#include "config.h"
#include "contexts.h"
#include "cuda_internal.h"
#include "device_memory.h"
#include "objects.h"
#include "pools.h"
#include "vmm.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace cudasim {

enum class AllocKind : uint8_t { Device, Pitch, Managed, Pool };

struct DeviceAllocation {
    int device = 0;
    CUcontext ctx = nullptr; // owner; pool memory outlives it
    AllocKind kind = AllocKind::Device;
    uint64_t requested = 0;
    Block block;
    CUmemoryPool pool = nullptr; // AllocKind::Pool only
    uint64_t id = 0;
};

struct HostAllocation {
    uint64_t size = 0;
    CUcontext ctx = nullptr;
    int device = 0;
    unsigned flags = 0;
    bool registered = false; // program memory made pinned by cuMemHostRegister, not ours
    uint64_t id = 0;
};

class Driver {
  public:
    static Driver& instance();

    std::mutex mutex;

    CUresult init(unsigned flags);
    // CUDA_ERROR_NOT_INITIALIZED until cuInit has succeeded.
    CUresult ready() const { return initialized_ ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }
    CUresult check_device(CUdevice device) const;
    int device_count() const { return static_cast<int>(devices_.size()); }
    DeviceMemory& memory(int device) { return *devices_[device]; }
    Vmm::Devices& devices() { return devices_; }
    uint64_t next_allocation_id() { return next_allocation_id_++; }

    // The calling thread's current context, ready for work (includes ready()).
    CUresult current_context(CUcontext* out);

    Contexts contexts;
    Vmm vmm;

    // Pointer registries, by base address.
    std::map<uint64_t, DeviceAllocation> device_allocations;
    std::map<uint64_t, HostAllocation> host_allocations;
    // The allocation containing `addr`, or end().
    std::map<uint64_t, DeviceAllocation>::iterator find_device_allocation(uint64_t addr);
    std::map<uint64_t, HostAllocation>::iterator find_host_allocation(uint64_t addr);
    void free_device_allocation(std::map<uint64_t, DeviceAllocation>::iterator it);
    void free_host_allocation(std::map<uint64_t, HostAllocation>::iterator it);

    std::unordered_set<CUarray> arrays;
    std::unordered_set<CUmipmappedArray> mipmapped_arrays;
    void destroy_array(CUarray array);
    void destroy_mipmapped_array(CUmipmappedArray array);

    std::unordered_set<CUstream> streams;
    std::unordered_set<CUevent> events;
    // NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are valid everywhere.
    bool is_valid_stream(CUstream stream) const;
    // The device a stream works on; special streams use the current context's device.
    CUresult stream_device(CUstream stream, int* device);

    // Pools the program may name: the default ones and those created and not yet destroyed.
    std::unordered_set<CUmemoryPool> pools;
    CUmemoryPool default_pool(int device) const { return default_pools_[device]; }
    CUmemoryPool current_pool(int device) const { return current_pools_[device]; }
    void set_current_pool(int device, CUmemoryPool pool) { current_pools_[device] = pool; }
    // A pool destroyed while allocations are outstanding lingers until the last one is freed.
    void destroy_pool(CUmemoryPool pool);
    // Synchronizing lets the pools of `device` hand memory above their threshold back.
    void on_synchronize(int device);

    // What a context owned goes away with it: device, pitch, managed, array and pinned host
    // allocations, streams and events. VMM and pool memory belong to the process.
    void teardown(CUcontext ctx);

  private:
    Driver() = default;
    void finish_pool_if_unused(CUmemoryPool pool);

    bool initialized_ = false;
    CUresult init_result_ = CUDA_ERROR_NOT_INITIALIZED;
    Config config_{};
    Vmm::Devices devices_;
    std::vector<CUmemoryPool> default_pools_;
    std::vector<CUmemoryPool> current_pools_;
    std::unordered_set<CUmemoryPool> dying_pools_;
    uint64_t next_allocation_id_ = 1;
};

} // namespace cudasim
