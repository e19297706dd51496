"""A test of programs built in code (testdata/program_builder.h) and run by the executor on the CPU."""

load("@rules_cc//cc:defs.bzl", "cc_test")
load("//:copts.bzl", "NRT_COPTS")

def built_program_test(name):
    cc_test(
        name = name,
        size = "small",
        srcs = [name + ".cc"],
        copts = NRT_COPTS,
        deps = [
            ":fused_and_apart",
            ":load_program",
            ":tensor_literals",
            "//executor/kernels/cpu:kernels",
            "//executor/runtime:executor",
            "//serializer",
            "//testdata:program_builder",
            "@system//:gtest_main",
        ],
    )
