#!/usr/bin/env bash
# Proof on a real GPU (docs/validation.md): runs every check of scripts/gpu_validate.py
# against BUILD_DIR (libgpumemtrace.so, the gpumemtrace CLI, the GPU programs) and writes
# logs, traces and summary.md to OUT_DIR. Exits non-zero when any check fails.
# Extra arguments go to gpu_validate.py (--only GROUPS, --runs N; see --help there).
# PYTHON names the interpreter (the one with PyTorch, CuPy, JAX); python3 when unset.
#   scripts/gpu-validate.sh build /tmp/gpu-out
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 BUILD_DIR OUT_DIR [--only GROUP,...] [--runs N]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
exec "${PYTHON:-python3}" "$here/gpu_validate.py" --build "$1" --out "$2" "${@:3}"
