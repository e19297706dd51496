#!/usr/bin/env python3
"""Writes the .npy files tests/executor/npy_test.cc reads, with NumPy itself.

Each dtype nrt reads gets a 2x3 array with values the test recomputes:
  signed ints: arange(6) - 2;  unsigned: arange(6);  floats: (arange(6) - 2) * 0.5;
  bool: [T, F, T, F, F, T];  complex: arange(6) + 1j * (arange(6) - 1).
Plus: a Fortran-ordered f4 array, a big-endian >i4 array, a version 2.0 file, a 0-d f8 and an
empty (0, 3) i8 array. Run from the repository root:

  /usr/bin/python3 tests/executor/make_npy_goldens.py
"""
import os

import numpy as np
from numpy.lib import format as npy_format

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "npy")


def values(dtype):
    k = np.dtype(dtype).kind
    base = np.arange(6).reshape(2, 3)
    if k == "b":
        return np.array([[True, False, True], [False, False, True]])
    if k == "u":
        return base
    if k == "i":
        return base - 2
    if k == "f":
        return (base - 2) * 0.5
    if k == "c":
        return base + 1j * (base - 1)
    raise ValueError(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    for code in ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1", "c8", "c16"]:
        np.save(os.path.join(OUT, code + ".npy"), values(code).astype(code))
    np.save(os.path.join(OUT, "fortran_f4.npy"), np.asfortranarray(values("f4").astype("f4")))
    np.save(os.path.join(OUT, "big_endian_i4.npy"), values("i4").astype(">i4"))
    with open(os.path.join(OUT, "version2_f4.npy"), "wb") as f:
        npy_format.write_array(f, values("f4").astype("f4"), version=(2, 0))
    np.save(os.path.join(OUT, "scalar_f8.npy"), np.array(3.5, dtype="f8"))
    np.save(os.path.join(OUT, "empty_i8.npy"), np.zeros((0, 3), dtype="i8"))


if __name__ == "__main__":
    main()
