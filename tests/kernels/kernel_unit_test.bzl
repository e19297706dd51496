"""A unit test of CPU kernels: NAME.cc and its helper headers, against the kernels library."""

load("@rules_cc//cc:defs.bzl", "cc_test")
load("//:copts.bzl", "NRT_COPTS")

def kernel_unit_test(name, headers = []):
    cc_test(
        name = name,
        size = "small",
        srcs = [name + ".cc"] + headers,
        copts = NRT_COPTS,
        deps = [
            "//executor/comm:process_group",
            "//executor/kernels/cpu:kernels",
            "//executor/runtime:tensor",
            "@system//:gtest_main",
        ],
    )
