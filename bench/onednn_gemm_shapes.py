"""fp32 GEMM time of oneDNN's dnnl_sgemm next to torch.mm (the system BLAS, OpenBLAS) at the shapes
of the DSSM towers (bench/configs/dssm_b4096.config) and their gradients, same process, same
threads, alternating, best of 5 x 10 calls per shape. Why tzrec routes libtorch's sgemm_ to oneDNN
(src/blas/sgemm_bridge.h). Usage: OMP_NUM_THREADS=2 /usr/bin/python3 bench/onednn_gemm_shapes.py
"""
import ctypes
import time

import torch

torch.set_num_threads(int(__import__("os").environ.get("OMP_NUM_THREADS", "2")))
dnnl = ctypes.CDLL("libdnnl.so.2")
sgemm = dnnl.dnnl_sgemm  # row-major: C = alpha op(A) op(B) + beta C
sgemm.restype = ctypes.c_int
sgemm.argtypes = [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_float,
                  ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_void_p,
                  ctypes.c_int64]

# (M, K, N, A stored transposed, B stored transposed): C[M, N] = op(A) op(B)
SHAPES = [
    (4096, 40, 256, False, True), (4096, 256, 128, False, True), (4096, 128, 64, False, True),  # user tower
    (5120, 40, 256, False, True), (5120, 256, 128, False, True), (5120, 128, 64, False, True),  # item tower
    (4096, 64, 1024, False, True),   # similarity with the negatives
    (4096, 1024, 64, False, False),  # its gradient for the users
    (64, 4096, 1024, True, False),   # and for the negatives
    (256, 4096, 40, True, False),    # first layer's weight gradient
    (4096, 256, 40, False, False),   # first layer's input gradient
    (128, 4096, 256, True, False), (4096, 128, 256, False, False),
]


def best(fn, reps=10, rounds=5):
    for _ in range(3):
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return min(times)


total_t = total_d = 0.0
for m, k, n, ta, tb in SHAPES:
    a = torch.randn(k, m) if ta else torch.randn(m, k)
    b = torch.randn(n, k) if tb else torch.randn(k, n)
    opa, opb = (a.t() if ta else a), (b.t() if tb else b)
    c = torch.empty(m, n)

    def run_dnnl():
        status = sgemm(b"T" if ta else b"N", b"T" if tb else b"N", m, n, k, 1.0, a.data_ptr(), a.shape[1],
                       b.data_ptr(), b.shape[1], 0.0, c.data_ptr(), n)
        assert status == 0, status

    run_dnnl()
    err = (c - opa @ opb).abs().max().item()
    t = best(lambda: torch.mm(opa, opb, out=c))
    d = best(run_dnnl)
    total_t += t
    total_d += d
    gflop = 2.0 * m * n * k / 1e9
    print("%5d x %5d x %5d  torch.mm %.3f ms (%3.0f GFLOP/s)  dnnl_sgemm %.3f ms (%3.0f GFLOP/s)  max diff %.1e"
          % (m, k, n, t * 1e3, gflop / t, d * 1e3, gflop / d, err))
print("all shapes: torch.mm %.2f ms, dnnl_sgemm %.2f ms (%.2fx)" % (total_t * 1e3, total_d * 1e3, total_t / total_d))
