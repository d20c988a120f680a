#!/usr/bin/env python3
"""Chapter 12 from Python: the dot product through the C ABI (abi/dot_abi.h), with ctypes.

usage: abi/dot_ctypes.py PATH/TO/lib12_dot_product.so   (or CHAPTER_LIB=PATH, as meson sets it)

Computes dot products and checks them against a double reference, then checks
that a bad handle and a size mismatch come back as error codes, not crashes.
Exits 0 on success, 1 on a failure, 77 when the library reports no GPU (an error
with REQUIRE_GPU=1). The seed did the same from Go with syscall.LoadDLL.
"""
import ctypes
import math
import os
import random
import sys

OK, BAD_HANDLE, SIZE_MISMATCH, BAD_ARGUMENT, NO_GPU = 0, 1, 2, 3, 4
SKIP = 77
U = 2.0 ** -24  # unit roundoff of float


def load(path):
    lib = ctypes.CDLL(path)
    lib.sw_dot_init.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_uint64)]
    lib.sw_dot.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_float),
                           ctypes.POINTER(ctypes.c_float), ctypes.c_int64,
                           ctypes.POINTER(ctypes.c_float)]
    lib.sw_dot_release.argtypes = [ctypes.c_uint64]
    lib.sw_dot_error_string.argtypes = [ctypes.c_int]
    lib.sw_dot_error_string.restype = ctypes.c_char_p
    for f in (lib.sw_dot_init, lib.sw_dot, lib.sw_dot_release):
        f.restype = ctypes.c_int
    return lib


class Checker:
    def __init__(self, lib):
        self.lib, self.failures = lib, 0

    def check(self, ok, what, detail=""):
        self.failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))

    def code(self, got, want, what):
        name = self.lib.sw_dot_error_string(got).decode()
        self.check(got == want, what, f"code {got} ({name}), want {want}")


def floats(values):
    return (ctypes.c_float * len(values))(*values)


def main():
    lib = load(os.environ.get("CHAPTER_LIB") or sys.argv[1])
    c = Checker(lib)
    result = ctypes.c_float(0.0)

    # Needs no GPU: a handle that was never issued.
    x1 = floats([1.0, 2.0])
    c.code(lib.sw_dot(12345, x1, x1, 2, ctypes.byref(result)), BAD_HANDLE, "bad handle")
    c.code(lib.sw_dot_release(0), BAD_HANDLE, "release of handle 0")

    n = 1000003
    handle = ctypes.c_uint64(0)
    code = lib.sw_dot_init(n, ctypes.byref(handle))
    if code == NO_GPU:
        why = lib.sw_dot_error_string(code).decode()
        if os.environ.get("REQUIRE_GPU") == "1":
            print(f"FAIL sw_dot_init: {why}, but REQUIRE_GPU=1")
            return 1
        print(f"skipped: {why} (set REQUIRE_GPU=1 to make this an error)")
        return SKIP
    c.code(code, OK, f"init n={n}")
    if code != OK:
        return 1
    h = handle.value

    # 1. Small integers: every product and every partial sum is an integer below
    #    2^24, so float arithmetic is exact in any order and the answer must be
    #    exactly the integer sum. A dropped or doubled element cannot hide.
    rng = random.Random(12)
    xi = [float(rng.randint(-4, 4)) for _ in range(n)]
    yi = [float(rng.randint(-4, 4)) for _ in range(n)]
    want = sum(a * b for a, b in zip(xi, yi))  # |partial sums| <= 16 n < 2^24
    c.code(lib.sw_dot(h, floats(xi), floats(yi), n, ctypes.byref(result)), OK, "dot, integer data")
    c.check(result.value == want, f"integer data n={n} is exact", f"got {result.value}, want {want}")

    # 2. Random floats: the double reference (products of floats are exact in
    #    double; fsum rounds once), and the bound gamma_n * sum |x_i y_i| that holds
    #    for float summation in any order (Higham, chapter 3).
    xs, ys = floats([rng.uniform(-1, 1) for _ in range(n)]), floats([rng.uniform(-1, 1) for _ in range(n)])
    prods = [xs[i] * ys[i] for i in range(n)]  # the stored floats, as doubles
    ref, abs_sum = math.fsum(prods), math.fsum(abs(p) for p in prods)
    bound = n * U / (1 - n * U) * abs_sum
    c.code(lib.sw_dot(h, xs, ys, n, ctypes.byref(result)), OK, "dot, random data")
    err = abs(result.value - ref)
    c.check(err <= bound, f"random data n={n} within gamma_n * sum|x y|",
            f"got {result.value:.9g}, double {ref:.9g}, error {err:.3g} "
            f"({err / abs_sum:.2e} of sum|x y|), bound {bound:.3g}")

    # 3. Errors that must not crash.
    c.code(lib.sw_dot(h, xs, ys, n - 1, ctypes.byref(result)), SIZE_MISMATCH, "size mismatch n-1")
    c.code(lib.sw_dot(h, xs, ys, n + 1, ctypes.byref(result)), SIZE_MISMATCH, "size mismatch n+1")
    c.code(lib.sw_dot(h, None, ys, n, ctypes.byref(result)), BAD_ARGUMENT, "null x")
    c.code(lib.sw_dot(h + 1000, xs, ys, n, ctypes.byref(result)), BAD_HANDLE, "handle never issued")
    c.code(lib.sw_dot_init(0, ctypes.byref(handle)), BAD_ARGUMENT, "init n=0")
    c.code(lib.sw_dot_release(h), OK, "release")
    c.code(lib.sw_dot(h, xs, ys, n, ctypes.byref(result)), BAD_HANDLE, "dot after release")
    c.code(lib.sw_dot_release(h), BAD_HANDLE, "double release")

    # 4. Two contexts of different sizes at once.
    h2, h3 = ctypes.c_uint64(0), ctypes.c_uint64(0)
    c.code(lib.sw_dot_init(3, ctypes.byref(h2)), OK, "init n=3")
    c.code(lib.sw_dot_init(5, ctypes.byref(h3)), OK, "init n=5")
    a = floats([1.0, 2.0, 3.0, 4.0, 5.0])
    c.code(lib.sw_dot(h2.value, a, a, 3, ctypes.byref(result)), OK, "dot n=3")
    c.check(result.value == 14.0, "n=3 gives 14", f"got {result.value}")
    c.code(lib.sw_dot(h3.value, a, a, 5, ctypes.byref(result)), OK, "dot n=5")
    c.check(result.value == 55.0, "n=5 gives 55", f"got {result.value}")
    c.code(lib.sw_dot(h2.value, a, a, 5, ctypes.byref(result)), SIZE_MISMATCH, "n=5 on the n=3 handle")
    c.code(lib.sw_dot_release(h2.value), OK, "release n=3")
    c.code(lib.sw_dot_release(h3.value), OK, "release n=5")

    print(f"12_dot_product-ctypes: {c.failures} failed")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
