// `whatif --capacity`: a size ("24GiB", "80G", "40000MB") or a named GPU ("A100-40GB",
// "H100-80GB", "L4", "RTX4090"), whose capacity is the memory its maker documents, in
// GiB (docs/whatif.md lists them). The usable part is less: the CUDA context and other
// libraries take some.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gmt::cli {

// The bytes of a size or named GPU; nullopt for neither.
std::optional<uint64_t> parseCapacity(std::string_view text);

// The named GPUs, for help and error messages: "A100-40GB, A100-80GB, ...".
std::string namedGpus();

} // namespace gmt::cli
