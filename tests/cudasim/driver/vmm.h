// Virtual memory management: address reservations, physical allocations (handles) and the
// mappings between them.
//
// Physical memory is charged to its device when created and uncharged only when nothing refers
// to it any more: every handle released AND every mapping unmapped, as on a real GPU. Handles
// imported from a shareable file descriptor refer to the same physical allocation, so an
// export/import round trip never counts memory twice; one exported by another process is
// described by its file (size, device) and charged to the exporter, not here. Host-located
// allocations are not device memory; they are backed by a memory file so that their mappings
// are real, shared memory.
#pragma once

#include "cuda_internal.h"
#include "device_memory.h"
#include "host_memory.h"
#include "range_allocator.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace cudasim {

class Vmm {
  public:
    using Devices = std::vector<std::unique_ptr<DeviceMemory>>;

    struct MappingInfo {
        uint64_t base;
        uint64_t size;
        int device; // -1 for host-located memory
        uint64_t allocation_id;
    };

    void init(uint64_t va_base, uint64_t va_size) { addresses_ = RangeAllocator(va_base, va_size); }

    CUresult reserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* out);
    CUresult free_reservation(uint64_t addr, uint64_t size);

    CUresult create(uint64_t size, const CUmemAllocationProp& prop, Devices& devices,
                    CUmemGenericAllocationHandle* out);
    CUresult release(CUmemGenericAllocationHandle handle, Devices& devices);
    CUresult retain(uint64_t addr, CUmemGenericAllocationHandle* out);
    CUresult properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp* out) const;

    CUresult map(uint64_t addr, uint64_t size, uint64_t offset,
                 CUmemGenericAllocationHandle handle);
    CUresult unmap(uint64_t addr, uint64_t size, Devices& devices);
    CUresult set_access(uint64_t addr, uint64_t size, const CUmemAccessDesc* desc, size_t count,
                        int device_count) const;

    CUresult export_handle(CUmemGenericAllocationHandle handle, CUmemAllocationHandleType type,
                           void* out);
    CUresult import_handle(void* os_handle, CUmemAllocationHandleType type,
                           CUmemGenericAllocationHandle* out);

    std::optional<MappingInfo> find_mapping(uint64_t addr) const;

  private:
    struct Physical {
        uint64_t id = 0;
        uint64_t size = 0;
        CUmemAllocationProp prop{};
        int device = -1;
        bool foreign = false;  // imported from another process: charged there, not here
        unsigned handles = 0;  // live handles referring to it
        unsigned mappings = 0; // live mappings of it
        int fd = -1;           // memory file: backing (host) or shareable identity (device)
        std::optional<host_memory::FileIdentity> identity;
    };
    struct Handle {
        std::shared_ptr<Physical> physical;
        unsigned references = 0;
    };
    struct Mapping {
        uint64_t size = 0;
        uint64_t offset = 0;
        std::shared_ptr<Physical> physical;
        CUmemGenericAllocationHandle handle = 0;
    };

    CUmemGenericAllocationHandle new_handle(std::shared_ptr<Physical> physical);
    bool ensure_file(Physical& physical);
    // Frees the physical memory once no handle and no mapping refers to it.
    void maybe_free(const std::shared_ptr<Physical>& physical, Devices& devices);
    bool fully_mapped(uint64_t addr, uint64_t size) const;

    RangeAllocator addresses_;
    std::map<uint64_t, uint64_t> reservations_; // base -> size
    std::map<uint64_t, Mapping> mappings_;      // base -> mapping
    std::unordered_map<CUmemGenericAllocationHandle, Handle> handles_;
    std::map<uint64_t, std::shared_ptr<Physical>> physical_; // live allocations by id
    uint64_t next_handle_ = 0x5e1100000001ull;
    uint64_t next_id_ = 1;
};

} // namespace cudasim
