// The bytes the recorder reports for a CUDA array (preload/hooks/array_sizes.cpp) against the
// simulator's own reckoning (tests/cudasim/driver/array_size.cpp), for every CU_AD_FORMAT_*
// value of the toolkit's cuda.h: cu_ad_formats.inc is generated from that header at configure
// time (tests/recorder/CMakeLists.txt), so a format a new toolkit adds is checked too. The two
// sides work element sizes out differently (a byte table, bits per channel), so a mistake in
// either fails here instead of being copied into the oracle.
#include "array_size.h"
#include "hooks/array_sizes.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Format {
    CUarray_format value;
    std::string name;
};

const std::vector<Format>& toolkitFormats() {
    static const std::vector<Format> formats = {
#define GMT_CU_AD_FORMAT(name) {name, #name},
#include "cu_ad_formats.inc"
#undef GMT_CU_AD_FORMAT
    };
    return formats;
}

CUDA_ARRAY3D_DESCRIPTOR descriptor3d(CUarray_format format, unsigned channels, size_t width,
                                     size_t height, size_t depth) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Format = format;
    d.NumChannels = channels;
    d.Width = width;
    d.Height = height;
    d.Depth = depth;
    return d;
}

} // namespace

TEST_CASE("the recorder and the simulator agree on the bytes of every toolkit array format") {
    REQUIRE(!toolkitFormats().empty());
    int compared = 0;
    for (const Format& format : toolkitFormats()) {
        INFO(format.name);
        // A format the simulator has never heard of must be described there first (sized,
        // or declined like the block-compressed and YUV ones) before this test can pass.
        REQUIRE(cudasim::format_known(format.value));
        for (unsigned channels : {1u, 2u, 3u, 4u}) {
            INFO("NumChannels " << channels);
            auto element = cudasim::element_bytes(format.value, channels);
            if (!element) {
                continue; // the simulator refuses to create it; the recorder sees a failed call
            }
            ++compared;
            CUDA_ARRAY_DESCRIPTOR d2{};
            d2.Format = format.value;
            d2.NumChannels = channels;
            d2.Width = 7;
            d2.Height = 3;
            CHECK(gmt::preload::arrayBytes(d2) == 7 * 3 * *element);
            for (auto [w, h, d] : {std::tuple<size_t, size_t, size_t>{1, 0, 0}, {5, 3, 2}}) {
                auto d3 = descriptor3d(format.value, channels, w, h, d);
                auto simulated = cudasim::array_bytes(d3);
                REQUIRE(simulated);
                CHECK(gmt::preload::arrayBytes(d3) == *simulated);
            }
        }
    }
    CHECK(compared > 0);
}

TEST_CASE("a 10-10-10-2 array is 4 bytes an element through the runtime and the driver") {
    // The runtime describes the format by its channels' bits; the driver by CUarray_format.
    cudaChannelFormatDesc runtime{10, 10, 10, 2, cudaChannelFormatKindUnsignedNormalized1010102};
    CHECK(gmt::preload::arrayBytes(runtime, cudaExtent{6, 2, 0}) == 6 * 2 * 4);
    for (unsigned channels : {1u, 4u}) {
        CUDA_ARRAY_DESCRIPTOR driver{};
        driver.Format = CU_AD_FORMAT_UNORM_INT_101010_2;
        driver.NumChannels = channels;
        driver.Width = 6;
        driver.Height = 2;
        CHECK(gmt::preload::arrayBytes(driver) == 6 * 2 * 4);
        CHECK(cudasim::element_bytes(CU_AD_FORMAT_UNORM_INT_101010_2, channels) == 4u);
    }
}
