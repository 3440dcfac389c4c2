"""CuPy with its default memory pool: the pool's view of its own size, for comparison."""
import json

import cupy

pool = cupy.get_default_memory_pool()
arrays = [cupy.ones((1024, 1024 + i), dtype=cupy.float32) for i in range(8)]
total = float(sum(a.sum() for a in arrays))
del arrays[::2]
print(json.dumps({"pool_total_bytes": pool.total_bytes(), "pool_used_bytes": pool.used_bytes(),
                  "checksum": total}), flush=True)
