"""A stand-in for the bit of PyTorch tests/gpu/torch_caching.py uses, for its dry run on the
simulated CUDA (tests/gpu/caching_dry_run.py): tensors live in the stand-in caching
allocator of tests/frameworks/fake_c10_cuda.cpp (torch/lib/libc10_cuda.so beside this file,
as in a wheel), which the recorder attaches to as it does to PyTorch's. A model's layers,
its activations, gradients and Adam's state allocate and free blocks the way a training
step does; nothing is computed.
"""
import ctypes
import os

__version__ = "2.11.0+stand-in"
uint8 = "uint8"

_lib = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib",
                                "libc10_cuda.so"))
_lib.fake_torch_malloc.restype = ctypes.c_void_p
_lib.fake_torch_malloc.argtypes = [ctypes.c_size_t, ctypes.c_void_p]
_lib.fake_torch_free.argtypes = [ctypes.c_void_p]
_lib.fake_torch_stats.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
_lib.fake_torch_init()
_STATS = ["allocated", "reserved", "active", "requested", "max_allocated", "max_reserved",
          "inactive_split", "inactive_split_bytes", "num_ooms"]


class OutOfMemoryError(RuntimeError):
    pass


class Tensor:
    def __init__(self, nbytes):
        self._free = _lib.fake_torch_free
        self._bytes = nbytes
        self.ptr = _lib.fake_torch_malloc(nbytes, None)
        self.grad = None
        if not self.ptr:
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes" % nbytes)

    def numel(self):
        return self._bytes

    def square(self):
        return Tensor(self._bytes)

    def mean(self):
        t = Tensor(4)
        t._graph = self
        return t

    def backward(self):
        self._graph = None  # the activations go, the gradients come
        for p in _PARAMETERS:
            if p.grad is None:
                p.grad = Tensor(p._bytes)

    def __del__(self):
        if self.ptr:
            self._free(self.ptr)
            self.ptr = None


_PARAMETERS = []


def manual_seed(seed):
    pass


def device(name):
    return name


def randn(*shape, device=None):
    n = 4
    for s in shape:
        n *= s
    return Tensor(n)


def empty(n, dtype=None, device=None):
    return Tensor(n)


class _Cuda:
    def synchronize(self):
        pass

    def memory_stats(self):
        out = (ctypes.c_uint64 * len(_STATS))()
        _lib.fake_torch_stats(out)
        s = dict(zip(_STATS, out))
        return {"allocated_bytes.all.current": s["allocated"],
                "reserved_bytes.all.current": s["reserved"],
                "inactive_split_bytes.all.current": s["inactive_split_bytes"],
                "inactive_split.all.current": s["inactive_split"], "num_ooms": s["num_ooms"]}

    def _stat(self, key):
        out = (ctypes.c_uint64 * len(_STATS))()
        _lib.fake_torch_stats(out)
        return dict(zip(_STATS, out))[key]

    def max_memory_allocated(self):
        return self._stat("max_allocated")

    def max_memory_reserved(self):
        return self._stat("max_reserved")


cuda = _Cuda()


class _Linear:
    def __init__(self, n_in, n_out):
        self.n_in = n_in
        self.n_out = n_out
        self.params = [Tensor(4 * n_in * n_out), Tensor(4 * n_out)]
        _PARAMETERS.extend(self.params)

    def __call__(self, x):
        rows = max(1, x._bytes // (4 * self.n_in))
        y = Tensor(4 * rows * self.n_out)
        y._graph = x
        return y


class _ReLU:
    params = []

    def __call__(self, x):
        y = Tensor(x._bytes)
        y._graph = x
        return y


class _Sequential:
    def __init__(self, *layers):
        self.layers = layers

    def to(self, device):
        return self

    def parameters(self):
        return [p for layer in self.layers for p in layer.params]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class _Nn:
    Linear = _Linear
    ReLU = _ReLU
    Sequential = _Sequential


nn = _Nn()


class _Adam:
    def __init__(self, params, lr=None):
        self.params = list(params)
        self.state = []

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self):
        if not self.state:
            self.state = [(Tensor(p._bytes), Tensor(p._bytes)) for p in self.params]


class _Optim:
    Adam = _Adam


optim = _Optim()
