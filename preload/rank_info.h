// Where this process sits in a multi-process job (torchrun, mpirun, srun...), read from the
// variables its launcher sets. Used for the trace header and the %r of GPUMEMTRACE_OUTPUT.
#pragma once

#include <cstdint>
#include <string>

namespace gmt::preload {

struct RankInfo {
    int32_t rank = -1;       // global rank; -1: not launched as a rank
    int32_t local_rank = -1; // rank on this host; -1: not known
    int32_t world_size = -1; // -1: not known
    std::string source;      // the variable the rank came from; empty when rank is -1
};

// Launchers, first match wins (a torchrun inside an srun allocation sets both RANK and
// SLURM_PROCID, and RANK is the one the program runs as):
//   RANK / LOCAL_RANK / WORLD_SIZE                             torchrun, torch.distributed
//   OMPI_COMM_WORLD_RANK / _LOCAL_RANK / _SIZE                  Open MPI
//   PMI_RANK / MPI_LOCALRANKID / PMI_SIZE                       MPICH, Intel MPI, PMI-2
//   SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS                 srun
// The local rank and size come from the same launcher as the rank. With none of the rank
// variables set, LOCAL_RANK alone (some single-host launchers) gives rank and local rank.
// A value that is not a plain non-negative decimal number is ignored.
RankInfo detectRank();

} // namespace gmt::preload
