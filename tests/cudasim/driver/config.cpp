#include "config.h"

#include "constants.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace cudasim {

namespace {

bool parse_unsigned(const char* text, uint64_t* out) {
    if (text == nullptr || *text < '0' || *text > '9') {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = value;
    return true;
}

uint64_t read_number(const char* name, uint64_t fallback, uint64_t min, uint64_t max) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') {
        return fallback;
    }
    uint64_t value = 0;
    if (!parse_unsigned(text, &value) || value < min || value > max) {
        std::fprintf(stderr,
                     "[cudasim] ignoring %s='%s': expected an integer in [%llu, %llu]; using "
                     "%llu\n",
                     name, text, static_cast<unsigned long long>(min),
                     static_cast<unsigned long long>(max),
                     static_cast<unsigned long long>(fallback));
        return fallback;
    }
    return value;
}

} // namespace

Config read_config_from_environment() {
    Config config{};
    config.devices =
        static_cast<int>(read_number("CUDASIM_DEVICES", kDefaultDeviceCount, 0, kMaxDeviceCount));
    // At most 1 TiB per device, so that every device's address range fits the process's
    // address space with room to spare (see Driver::init).
    config.capacity = read_number("CUDASIM_MEMORY_BYTES", kDefaultCapacity, 1, 1ull << 40);
    return config;
}

} // namespace cudasim
