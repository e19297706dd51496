"""Compiler flags for nrt's own code: C++20 (from .bazelrc), every warning an error."""

# gcc (the build of //... and its tests, TSan) makes every warning an error. The clang
# ASan+UBSan build (.bazelrc's clang-asan) keeps the warnings but not as errors: its job is the
# sanitizers and the fuzz targets, and clang warns about gcc's own options (-Wno-restrict).
NRT_COPTS = select({
    "//:clang": ["-Wall", "-Wextra", "-Wno-unknown-warning-option"],
    "//conditions:default": ["-Wall", "-Wextra", "-Werror"],
})
