"""nrt_cuda_library: CUDA C++ (.cu) compiled by nvcc, one object per file, into a cc_library.

Each .cu file is one genrule (one translation unit per kernel family, so a change rebuilds one
family, and the two cores of a CI machine compile two at once). Device code is built for every
SM of CUDA_ARCHS as machine code plus PTX of the last; host code with gcc's warnings as errors,
device code with nvcc's (-Werror all-warnings). Without CUDA (@cuda//:defs.bzl) the library is
empty and `srcs`, `cu_srcs` are not compiled: callers link it either way.
"""

load("@cuda//:defs.bzl", "CUDA_ARCHS", "CUDA_ENABLED", "NVCC")
load("@rules_cc//cc:defs.bzl", "cc_library")

NVCC_FLAGS = [
    "-std=c++20",
    "-O3",
    "-Xcompiler=-fPIC,-Wall,-Wextra,-Werror",
    "-Werror=all-warnings",
    "--expt-relaxed-constexpr",
    "-I.",
]

def _gencode():
    flags = ["-gencode=arch=compute_%s,code=sm_%s" % (a, a) for a in CUDA_ARCHS]
    flags.append("-gencode=arch=compute_%s,code=compute_%s" % (CUDA_ARCHS[-1], CUDA_ARCHS[-1]))
    return flags

def nrt_cuda_library(name, cu_srcs = [], cu_hdrs = [], srcs = [], hdrs = [], deps = [], copts = [], **kwargs):
    """A cc_library of gcc-compiled `srcs` and nvcc-compiled `cu_srcs` (empty without CUDA).

    `cu_hdrs` are the headers the .cu files include (declared inputs of nvcc's actions).
    """
    if not CUDA_ENABLED:
        cc_library(name = name, **kwargs)
        return
    objects = []
    for src in cu_srcs:
        obj = "_%s_%s.pic.o" % (name, src.replace("/", "_").replace(".cu", ""))
        native.genrule(
            name = obj.replace(".", "_"),
            srcs = [src] + cu_hdrs,
            outs = [obj],
            cmd = "%s %s %s -c $(location %s) -o $@" % (NVCC, " ".join(NVCC_FLAGS), " ".join(_gencode()), src),
            message = "nvcc " + src,
        )
        objects.append(obj)
    cc_library(
        name = name,
        srcs = srcs + objects,
        hdrs = hdrs,
        copts = copts,
        deps = deps + ["@cuda//:runtime"],
        **kwargs
    )
