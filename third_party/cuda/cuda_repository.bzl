"""@cuda: the CUDA toolkit nrt's device code is built with, or nothing when there is none.

Chosen at build time, once per output base:
- NRT_CUDA unset: the toolkit at /usr/local/cuda when its bin/nvcc exists, else no CUDA.
- NRT_CUDA=0: no CUDA, even where a toolkit exists (the build of a machine without one).
- NRT_CUDA=/path: the toolkit at /path (an error when it has no bin/nvcc).
NRT_CUDA_ARCHS (default "90"; comma-separated) lists the SM versions compiled (each as machine code), plus PTX of
the last, so newer GPUs JIT it.

@cuda//:defs.bzl gives CUDA_ENABLED, NVCC and CUDA_ARCHS; @cuda//:runtime links cudart and names
the directory cuBLASLt is opened from when first used (executor/cuda/cublaslt_library.h); empty
without CUDA.
"""

def _cuda_repository_impl(ctx):
    choice = ctx.os.environ.get("NRT_CUDA", "")
    archs = [a.strip() for a in ctx.os.environ.get("NRT_CUDA_ARCHS", "90").split(",") if a.strip()]
    home = "/usr/local/cuda" if choice in ("", "1") else choice
    enabled = choice != "0" and ctx.path(home + "/bin/nvcc").exists
    if choice not in ("", "0", "1") and not enabled:
        fail("NRT_CUDA=%s has no bin/nvcc: point it at a CUDA toolkit, or set NRT_CUDA=0" % choice)
    if enabled:
        ctx.symlink(home + "/include", "include")
        build = """package(default_visibility = ["//visibility:public"])

# The CUDA runtime, linked dynamically (a machine without a driver still loads the program; the
# first CUDA call then reports what is missing). cuBLASLt is not linked: executor/cuda opens it
# when a CUDA context is first made, from the search path or from this toolkit's lib64.
cc_library(
    name = "runtime",
    hdrs = glob(["include/*.h", "include/crt/*.h", "include/crt/*.hpp", "include/*.hpp"]),
    includes = ["include"],
    # Single quotes: Bazel splits defines as a shell would, which would drop the double ones.
    defines = ["NRT_CUDA_LIBRARY_DIR='\\"{home}/lib64\\"'"],
    linkopts = ["-L{home}/lib64", "-lcudart", "-ldl", "-Wl,-rpath,{home}/lib64"],
)
""".format(home = home)
    else:
        build = """package(default_visibility = ["//visibility:public"])

cc_library(name = "runtime")
"""
    ctx.file("BUILD", build)
    ctx.file("defs.bzl", "CUDA_ENABLED = {}\nNVCC = \"{}\"\nCUDA_ARCHS = {}\n".format(
        enabled,
        home + "/bin/nvcc" if enabled else "",
        archs,
    ))

cuda_repository = repository_rule(
    implementation = _cuda_repository_impl,
    environ = ["NRT_CUDA", "NRT_CUDA_ARCHS"],
    local = True,
)
