"""Compiler flags for nrt's own code: C++20 (from .bazelrc), every warning an error."""
NRT_COPTS = ["-Wall", "-Wextra", "-Werror"]
