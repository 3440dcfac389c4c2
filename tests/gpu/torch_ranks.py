"""A 2-rank torch.distributed job on NCCL, for scripts/gpu_validate_ranks.py.

Started by torchrun (RANK, LOCAL_RANK, WORLD_SIZE in the environment), one GPU per rank.
Collectives and point-to-point transfers make NCCL map the other rank's buffers
(cuMemImportFromShareableHandle) and free its own the way ncclCuMemFree does. Everything
the script allocates is freed before exit, except, on rank 1 only, one raw cudaMalloc of
PLANTED_BYTES kept on purpose: with PYTORCH_NO_CUDA_MEMORY_CACHING=1 every tensor is its own
cudaMalloc/cudaFree, so that is the only leak a tracer should report for this script.

The last stdout line of each rank is JSON: rank, device, planted bytes (0 on rank 0).
"""
import ctypes
import json
import os

import torch
import torch.distributed as dist

PLANTED_BYTES = 7 * 1024 * 1024 + 12288  # distinctive: nothing else asks for this size
STEPS = int(os.environ.get("STEPS", "20"))
# Multicast (NVLS) is never used on this machine; the runner sets these for every process.
REQUIRED_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}


def cudart():
    """The CUDA runtime PyTorch loaded (by its soname, else by its path in our maps)."""
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcudart.so" in path:
                return ctypes.CDLL(path)
    raise RuntimeError("libcudart not found in this process")


def plant_leak():
    rt = cudart()
    ptr = ctypes.c_void_p()
    err = rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(PLANTED_BYTES))
    if err != 0:
        raise RuntimeError(f"cudaMalloc({PLANTED_BYTES}) failed: {err}")
    return ptr.value  # never freed


def main():
    for key, value in REQUIRED_ENV.items():
        if os.environ.get(key) != value:
            raise SystemExit(f"{key}={value} must be set for every process (got "
                             f"{os.environ.get(key)!r})")
    rank = int(os.environ["RANK"])
    local = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)

    x = torch.full((1 << 20,), float(rank + 1), device=dev)
    gathered = [torch.empty_like(x) for _ in range(world)]
    for _ in range(STEPS):
        dist.all_reduce(x)
        dist.all_gather(gathered, x)
        dist.broadcast(x, src=0)
        x.div_(world)
    # Point to point: rank 0 sends, rank 1 receives (NCCL's p2p transport).
    y = torch.arange(1 << 18, device=dev, dtype=torch.float32)
    if rank == 0:
        dist.send(y, dst=1)
    elif rank == 1:
        dist.recv(y, src=0)
    torch.cuda.synchronize()
    # Every rank ends with the same values; the received range arrived whole.
    ok = bool(torch.allclose(x, torch.full_like(x, x[0].item()))) and y[-1].item() == (1 << 18) - 1

    planted = plant_leak() if rank == 1 else None
    dist.barrier()
    dist.destroy_process_group()
    del x, y, gathered
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    print(json.dumps({"rank": rank, "local_rank": local, "device": local, "world_size": world,
                      "collectives_ok": ok,
                      "planted_bytes": PLANTED_BYTES if planted else 0,
                      "torch": torch.__version__,
                      "nccl": str(torch.cuda.nccl.version())}), flush=True)


if __name__ == "__main__":
    main()
