#include "rank_info.h"

#include <cstdlib>

namespace gmt::preload {
namespace {

// A plain decimal number in 0..999999999 (no sign, no spaces), or -1.
int32_t readIndex(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) {
        return -1;
    }
    int32_t n = 0;
    int digits = 0;
    for (const char* p = v; *p; ++p) {
        if (*p < '0' || *p > '9' || ++digits > 9) {
            return -1;
        }
        n = n * 10 + (*p - '0');
    }
    return n;
}

struct Launcher {
    const char* rank;
    const char* local_rank;
    const char* world_size;
};

constexpr Launcher kLaunchers[] = {
    {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
};

} // namespace

RankInfo detectRank() {
    RankInfo info;
    for (const Launcher& l : kLaunchers) {
        int32_t rank = readIndex(l.rank);
        if (rank < 0) {
            continue;
        }
        info.rank = rank;
        info.local_rank = readIndex(l.local_rank);
        info.world_size = readIndex(l.world_size);
        info.source = l.rank;
        return info;
    }
    if (int32_t local = readIndex("LOCAL_RANK"); local >= 0) {
        info.rank = local;
        info.local_rank = local;
        info.source = "LOCAL_RANK";
    }
    return info;
}

} // namespace gmt::preload
