"""cc_fuzz_test: a libFuzzer target and its seed corpus as a regression test.

    load("//third_party/fuzzing:fuzz.bzl", "cc_fuzz_test")
    cc_fuzz_test(
        name = "memcmp_codec_fuzz",
        srcs = ["memcmp_codec_fuzz.cc"],   # defines LLVMFuzzerTestOneInput
        corpus = glob(["testdata/memcmp_codec_fuzz/*"]),
        deps = [":memcmp_codec"],
    )

gives (each linked with :fuzz_check, what the targets share)
  - `<name>`: a cc_test replaying every corpus file (runs in `bazel test`);
  - `<name>_fuzzer`: the fuzzer binary. Built with `--config=fuzz` (clang,
    ASan, UBSan and coverage as `--config=sanitize` compiles, linked with
    -fsanitize=fuzzer) it is a real libFuzzer binary:
      bazel run --config=fuzz //serde:memcmp_codec_fuzz_fuzzer -- -max_total_time=600
    Without that config it is the same replay driver as the test.
"""

def cc_fuzz_test(name, srcs, corpus, deps = [], **kwargs):
    native.filegroup(
        name = name + "_corpus",
        srcs = corpus,
        testonly = True,
    )
    native.cc_test(
        name = name,
        srcs = srcs,
        deps = deps + [
            "//third_party/fuzzing:fuzz_check",
            "//third_party/fuzzing:replay_main",
        ],
        data = [":" + name + "_corpus"],
        args = ["$(locations :" + name + "_corpus)"],
        tags = ["fuzz_regression"],
        **kwargs
    )
    native.cc_binary(
        name = name + "_fuzzer",
        srcs = srcs,
        testonly = True,
        deps = deps + ["//third_party/fuzzing:fuzz_check"] + select({
            "//third_party/fuzzing:libfuzzer": [],
            "//conditions:default": ["//third_party/fuzzing:replay_main"],
        }),
        linkopts = select({
            "//third_party/fuzzing:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["fuzzer"],
    )
