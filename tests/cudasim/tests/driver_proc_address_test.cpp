// cuGetProcAddress: names, ABI versions, per-thread flavours, and full coverage of the exports.
#include "driver_test_support.h"

#include <dlfcn.h>
#include <elf.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace cudasim_test;

namespace {

void* exported(const char* name) {
    static void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(library != nullptr);
    return dlsym(library, name);
}

void* resolve(const char* symbol, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status{};
    CUresult result = cuGetProcAddress(symbol, &pfn, version, flags, &status);
    INFO(symbol << " at " << version);
    REQUIRE(result == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
    return pfn;
}

// The functions the simulated libcuda exports, read from its own dynamic symbol table.
std::vector<std::string> exported_functions() {
    Dl_info info{};
    REQUIRE(dladdr(exported("cuInit"), &info) != 0);
    std::ifstream file(info.dli_fname, std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    REQUIRE(image.size() > sizeof(Elf64_Ehdr));
    const auto* header = reinterpret_cast<const Elf64_Ehdr*>(image.data());
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(image.data() + header->e_shoff);
    std::vector<std::string> names;
    for (int i = 0; i < header->e_shnum; ++i) {
        if (sections[i].sh_type != SHT_DYNSYM) {
            continue;
        }
        const char* strings = image.data() + sections[sections[i].sh_link].sh_offset;
        const auto* symbols =
            reinterpret_cast<const Elf64_Sym*>(image.data() + sections[i].sh_offset);
        size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
        for (size_t s = 0; s < count; ++s) {
            if (ELF64_ST_TYPE(symbols[s].st_info) == STT_FUNC &&
                ELF64_ST_BIND(symbols[s].st_info) == STB_GLOBAL &&
                symbols[s].st_shndx != SHN_UNDEF) {
                names.emplace_back(strings + symbols[s].st_name);
            }
        }
    }
    return names;
}

std::string base_name(std::string name) {
    for (const char* suffix : {"_ptsz", "_ptds", "_v2", "_v3", "_v4"}) {
        std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            name.resize(name.size() - s.size());
        }
    }
    return name;
}

} // namespace

TEST_CASE("base names resolve to the versioned function for the requested ABI", "[proc-address]") {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    CHECK(resolve("cuMemAlloc", 13000) == exported("cuMemAlloc_v2"));
    CHECK(resolve("cuMemAlloc", 3020) == exported("cuMemAlloc_v2"));
    CHECK(resolve("cuGetProcAddress", 12000) == exported("cuGetProcAddress_v2"));
    CHECK(resolve("cuGetProcAddress", 11030) == exported("cuGetProcAddress"));
    CHECK(resolve("cuCtxCreate", 3020) == exported("cuCtxCreate_v2"));
    CHECK(resolve("cuCtxCreate", 11040) == exported("cuCtxCreate_v3"));
    CHECK(resolve("cuCtxCreate", 12050) == exported("cuCtxCreate_v4"));
    CHECK(resolve("cuDevicePrimaryCtxReset", 10000) == exported("cuDevicePrimaryCtxReset"));
    CHECK(resolve("cuDevicePrimaryCtxReset", 11000) == exported("cuDevicePrimaryCtxReset_v2"));
    CHECK(resolve("cuCtxSynchronize", 12080) == exported("cuCtxSynchronize"));
    CHECK(resolve("cuCtxSynchronize", 13000) == exported("cuCtxSynchronize_v2"));
    CHECK(resolve("cuMemHostRegister", 13000) == exported("cuMemHostRegister_v2"));
    CHECK(resolve("cuMemCreate", 13000) == exported("cuMemCreate"));
}

TEST_CASE("the per-thread flag picks the _ptsz/_ptds flavour where one exists", "[proc-address]") {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    const cuuint64_t per_thread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    CHECK(resolve("cuMemAllocAsync", 13000, per_thread) == exported("cuMemAllocAsync_ptsz"));
    CHECK(resolve("cuMemAllocAsync", 13000) == exported("cuMemAllocAsync"));
    CHECK(resolve("cuMemAllocAsync", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM) ==
          exported("cuMemAllocAsync"));
    CHECK(resolve("cuMemFreeAsync", 13000, per_thread) == exported("cuMemFreeAsync_ptsz"));
    CHECK(resolve("cuMemAllocFromPoolAsync", 13000, per_thread) ==
          exported("cuMemAllocFromPoolAsync_ptsz"));
    CHECK(resolve("cuMemcpyHtoD", 13000, per_thread) == exported("cuMemcpyHtoD_v2_ptds"));
    CHECK(resolve("cuMemAlloc", 13000, per_thread) == exported("cuMemAlloc_v2"));
    // The per-thread flavour of cuStreamSynchronize is newer than its legacy one.
    CHECK(resolve("cuStreamSynchronize", 6000, per_thread) == exported("cuStreamSynchronize"));
}

// As on an H200 (driver 580.159) and as cuda.h documents: not finding a symbol is not an
// error; the pointer is NULL and the status says why.
TEST_CASE("unknown names and insufficient versions give NULL and a status", "[proc-address]") {
    void* pfn = reinterpret_cast<void*>(0x1);
    CUdriverProcAddressQueryResult status{};
    CHECK(cuGetProcAddress("cuNoSuchFunction", &pfn, 13000, 0, &status) == CUDA_SUCCESS);
    CHECK(pfn == nullptr);
    CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    pfn = reinterpret_cast<void*>(0x1);
    CHECK(cuGetProcAddress("", &pfn, 12000, 0, &status) == CUDA_SUCCESS);
    CHECK(pfn == nullptr);
    CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    // The real driver still has the 32-bit cuMemAlloc of CUDA 2.0; the simulator does not.
    CHECK(cuGetProcAddress("cuMemAllocAsync", &pfn, 11000, 0, &status) == CUDA_SUCCESS);
    CHECK(pfn == nullptr);
    CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(cuGetProcAddress("cuMemAlloc", &pfn, 13010, 0, &status) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGetProcAddress("cuMemAlloc", nullptr, 13000, 0, &status) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGetProcAddress("cuMemAlloc", &pfn, 13000, 8, &status) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("the 4-argument resolver answers like the 5-argument one", "[proc-address]") {
    using Resolver11030 = CUresult (*)(const char*, void**, int, cuuint64_t);
    auto legacy = reinterpret_cast<Resolver11030>(exported("cuGetProcAddress"));
    void* pfn = nullptr;
    REQUIRE(legacy("cuMemFree", &pfn, 13000, 0) == CUDA_SUCCESS);
    CHECK(pfn == exported("cuMemFree_v2"));
    CHECK(legacy("cuNoSuchFunction", &pfn, 13000, 0) == CUDA_SUCCESS);
    CHECK(pfn == nullptr);
}

TEST_CASE("every exported function is reachable by its base name", "[proc-address]") {
    const int versions[] = {2000, 2020,  2030,  3020,  4000,  5000,  5050,  6000,  6050,  7000,
                            9020, 10020, 11000, 11020, 11030, 11040, 12000, 12050, 12080, 13000};
    const cuuint64_t flags[] = {CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
    auto names = exported_functions();
    REQUIRE(names.size() > 100);
    for (const std::string& name : names) {
        INFO(name);
        CHECK(name.rfind("cu", 0) == 0); // nothing but the CUDA API is exported
        void* target = exported(name.c_str());
        bool reached = false;
        for (int version : versions) {
            for (cuuint64_t flag : flags) {
                void* pfn = nullptr;
                cuGetProcAddress(base_name(name).c_str(), &pfn, version, flag, nullptr);
                if (pfn == target) {
                    reached = true;
                }
            }
        }
        CHECK(reached);
    }
}
