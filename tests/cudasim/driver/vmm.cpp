#include "vmm.h"

#include "constants.h"

#include <fcntl.h>
#include <unistd.h>

namespace cudasim {

namespace {

bool is_granular(uint64_t value) {
    return value % kGranule == 0;
}

} // namespace

CUresult Vmm::reserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* out) {
    if (size == 0 || !is_granular(size) || (alignment & (alignment - 1)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    alignment = alignment < kGranule ? kGranule : alignment;
    // The hint is honoured when that range is free, and silently ignored otherwise.
    if (hint != 0 && hint % alignment == 0 && addresses_.allocate_at(hint, size)) {
        reservations_.emplace(hint, size);
        *out = hint;
        return CUDA_SUCCESS;
    }
    auto addr = addresses_.allocate(size, alignment);
    if (!addr) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    reservations_.emplace(*addr, size);
    *out = *addr;
    return CUDA_SUCCESS;
}

CUresult Vmm::free_reservation(uint64_t addr, uint64_t size) {
    auto it = reservations_.find(addr);
    if (it == reservations_.end() || it->second != size) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto mapped = mappings_.lower_bound(addr);
    if (mapped != mappings_.end() && mapped->first < addr + size) {
        return CUDA_ERROR_INVALID_VALUE; // still mapped: unmap first
    }
    addresses_.free(addr, size);
    reservations_.erase(it);
    return CUDA_SUCCESS;
}

CUresult Vmm::create(uint64_t size, const CUmemAllocationProp& prop, Devices& devices,
                     CUmemGenericAllocationHandle* out) {
    if (size == 0 || !is_granular(size) || prop.type != CU_MEM_ALLOCATION_TYPE_PINNED) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto physical = std::make_shared<Physical>();
    physical->size = size;
    physical->prop = prop;
    switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        if (prop.location.id < 0 || prop.location.id >= static_cast<int>(devices.size())) {
            return CUDA_ERROR_INVALID_DEVICE;
        }
        if (!devices[prop.location.id]->charge(size)) {
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        physical->device = prop.location.id;
        break;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        physical->fd = host_memory::create_memory_file(size, -1);
        if (physical->fd < 0) {
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        physical->identity = host_memory::file_identity(physical->fd);
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    physical->id = next_id_++;
    physical_.emplace(physical->id, physical);
    *out = new_handle(std::move(physical));
    return CUDA_SUCCESS;
}

CUmemGenericAllocationHandle Vmm::new_handle(std::shared_ptr<Physical> physical) {
    CUmemGenericAllocationHandle handle = next_handle_++;
    ++physical->handles;
    handles_.emplace(handle, Handle{std::move(physical), 1});
    return handle;
}

CUresult Vmm::release(CUmemGenericAllocationHandle handle, Devices& devices) {
    auto it = handles_.find(handle);
    if (it == handles_.end()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (--it->second.references > 0) {
        return CUDA_SUCCESS;
    }
    std::shared_ptr<Physical> physical = std::move(it->second.physical);
    handles_.erase(it);
    --physical->handles;
    maybe_free(physical, devices);
    return CUDA_SUCCESS;
}

void Vmm::maybe_free(const std::shared_ptr<Physical>& physical, Devices& devices) {
    if (physical->handles > 0 || physical->mappings > 0) {
        return;
    }
    if (physical->device >= 0 && !physical->foreign) {
        devices[physical->device]->uncharge(physical->size);
    }
    if (physical->fd >= 0) {
        close(physical->fd);
        physical->fd = -1;
    }
    physical_.erase(physical->id);
}

CUresult Vmm::retain(uint64_t addr, CUmemGenericAllocationHandle* out) {
    auto it = mappings_.upper_bound(addr);
    if (it == mappings_.begin()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    --it;
    if (addr - it->first >= it->second.size) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // The handle given back is the one that was mapped there, even if the program has already
    // released it (the mapping kept the memory alive).
    CUmemGenericAllocationHandle handle = it->second.handle;
    auto h = handles_.find(handle);
    if (h != handles_.end()) {
        ++h->second.references;
    } else {
        ++it->second.physical->handles;
        handles_.emplace(handle, Handle{it->second.physical, 1});
    }
    *out = handle;
    return CUDA_SUCCESS;
}

CUresult Vmm::properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp* out) const {
    auto it = handles_.find(handle);
    if (it == handles_.end()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *out = it->second.physical->prop;
    return CUDA_SUCCESS;
}

CUresult Vmm::map(uint64_t addr, uint64_t size, uint64_t offset,
                  CUmemGenericAllocationHandle handle) {
    auto h = handles_.find(handle);
    if (h == handles_.end() || size == 0 || !is_granular(addr) || !is_granular(size) ||
        !is_granular(offset)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    Physical& physical = *h->second.physical;
    if (offset > physical.size || size > physical.size - offset) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto r = reservations_.upper_bound(addr);
    if (r == reservations_.begin()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    --r;
    if (addr - r->first >= r->second || size > r->second - (addr - r->first)) {
        return CUDA_ERROR_INVALID_VALUE; // not inside one reservation
    }
    auto next = mappings_.lower_bound(addr);
    if (next != mappings_.end() && next->first < addr + size) {
        return CUDA_ERROR_INVALID_VALUE; // overlaps a mapping
    }
    if (next != mappings_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second.size > addr) {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (physical.device < 0 && !host_memory::back_with_file(addr, size, physical.fd, offset)) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ++physical.mappings;
    mappings_.emplace(addr, Mapping{size, offset, h->second.physical, handle});
    return CUDA_SUCCESS;
}

CUresult Vmm::unmap(uint64_t addr, uint64_t size, Devices& devices) {
    // The range must consist of whole mappings, back to back.
    auto first = mappings_.find(addr);
    if (first == mappings_.end() || size == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto last = first;
    uint64_t end = addr;
    for (; last != mappings_.end() && last->first == end && end < addr + size; ++last) {
        end += last->second.size;
    }
    if (end != addr + size) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (auto it = first; it != last;) {
        std::shared_ptr<Physical> physical = it->second.physical;
        if (physical->device < 0) {
            host_memory::return_to_reservation(it->first, it->second.size);
        }
        it = mappings_.erase(it);
        --physical->mappings;
        maybe_free(physical, devices);
    }
    return CUDA_SUCCESS;
}

bool Vmm::fully_mapped(uint64_t addr, uint64_t size) const {
    auto it = mappings_.upper_bound(addr);
    if (it == mappings_.begin()) {
        return false;
    }
    --it;
    uint64_t covered = addr;
    for (; it != mappings_.end() && covered < addr + size; ++it) {
        if (it->first > covered || it->first + it->second.size <= covered) {
            return false;
        }
        covered = it->first + it->second.size;
    }
    return covered >= addr + size;
}

CUresult Vmm::set_access(uint64_t addr, uint64_t size, const CUmemAccessDesc* desc, size_t count,
                         int device_count) const {
    if (desc == nullptr || count == 0 || size == 0 || !fully_mapped(addr, size)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < count; ++i) {
        const CUmemLocation& where = desc[i].location;
        if (where.type == CU_MEM_LOCATION_TYPE_DEVICE &&
            (where.id < 0 || where.id >= device_count)) {
            return CUDA_ERROR_INVALID_DEVICE;
        }
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

bool Vmm::ensure_file(Physical& physical) {
    if (physical.fd < 0) {
        physical.fd = host_memory::create_memory_file(physical.size, physical.device);
        if (physical.fd < 0) {
            return false;
        }
        physical.identity = host_memory::file_identity(physical.fd);
    }
    return physical.identity.has_value();
}

CUresult Vmm::export_handle(CUmemGenericAllocationHandle handle, CUmemAllocationHandleType type,
                            void* out) {
    auto it = handles_.find(handle);
    if (it == handles_.end() || out == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    Physical& physical = *it->second.physical;
    if ((physical.prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
        return CUDA_ERROR_INVALID_VALUE; // not created as exportable
    }
    if (!ensure_file(physical)) {
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    int fd = dup(physical.fd);
    if (fd < 0) {
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    *static_cast<int*>(out) = fd;
    return CUDA_SUCCESS;
}

CUresult Vmm::import_handle(void* os_handle, CUmemAllocationHandleType type,
                            CUmemGenericAllocationHandle* out) {
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    auto identity =
        host_memory::file_identity(static_cast<int>(reinterpret_cast<intptr_t>(os_handle)));
    if (!identity) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (auto& [id, physical] : physical_) {
        if (physical->identity == identity) {
            *out = new_handle(physical);
            return CUDA_SUCCESS;
        }
    }
    // Exported by another process, whose simulator state this one cannot see: the file says
    // how big the allocation is and where it lives. Its memory is the exporter's, charged
    // there, not here.
    auto described =
        host_memory::describe_memory_file(static_cast<int>(reinterpret_cast<intptr_t>(os_handle)));
    if (!described) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto physical = std::make_shared<Physical>();
    physical->size = described->size;
    physical->device = described->device;
    physical->foreign = true;
    physical->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    physical->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    physical->prop.location.type =
        described->device < 0 ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
    physical->prop.location.id = described->device < 0 ? 0 : described->device;
    physical->fd =
        fcntl(static_cast<int>(reinterpret_cast<intptr_t>(os_handle)), F_DUPFD_CLOEXEC, 0);
    if (physical->fd < 0) {
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    physical->identity = identity;
    physical->id = next_id_++;
    physical_.emplace(physical->id, physical);
    *out = new_handle(std::move(physical));
    return CUDA_SUCCESS;
}

std::optional<Vmm::MappingInfo> Vmm::find_mapping(uint64_t addr) const {
    auto it = mappings_.upper_bound(addr);
    if (it == mappings_.begin()) {
        return std::nullopt;
    }
    --it;
    if (addr - it->first >= it->second.size) {
        return std::nullopt;
    }
    return MappingInfo{it->first, it->second.size, it->second.physical->device,
                       it->second.physical->id};
}

} // namespace cudasim
