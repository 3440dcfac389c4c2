"""JAX/XLA: a few jitted steps, and what the XLA client says about its memory."""
import json

import jax
import jax.numpy as jnp

x = jnp.ones((2048, 2048), dtype=jnp.float32)


@jax.jit
def step(a):
    return jnp.tanh(a @ a.T) * 0.5


for _ in range(5):
    x = step(x)
x.block_until_ready()
stats = jax.devices()[0].memory_stats() or {}
print(json.dumps({k: stats.get(k) for k in
                  ("bytes_in_use", "peak_bytes_in_use", "bytes_reserved", "pool_bytes",
                   "bytes_limit")}), flush=True)
