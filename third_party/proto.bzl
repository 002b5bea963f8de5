"""cc_proto: C++ code from .proto files with the system protoc (offline).

Example:
    load("//third_party:proto.bzl", "cc_proto")
    cc_proto(name = "catalog_cc_proto", srcs = ["catalog.proto"])

gives a cc_library `catalog_cc_proto` whose header is `<pkg>/catalog.pb.h`.
Imports between .proto files are resolved from the workspace root, so a file
imports another as "storage/catalog.proto". `deps` are other cc_proto targets.
"""

def cc_proto(name, srcs, deps = [], visibility = None, testonly = False):
    headers = [src[:-len(".proto")] + ".pb.h" for src in srcs]
    sources = [src[:-len(".proto")] + ".pb.cc" for src in srcs]
    native.genrule(
        name = name + "_protoc",
        srcs = srcs + [dep + "_srcs" for dep in deps],
        outs = headers + sources,
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) " +
              " ".join(["$(location %s)" % src for src in srcs]),
        testonly = testonly,
        visibility = ["//visibility:private"],
    )
    native.filegroup(
        name = name + "_srcs",
        srcs = srcs + [dep + "_srcs" for dep in deps],
        testonly = testonly,
        visibility = visibility,
    )
    native.cc_library(
        name = name,
        srcs = sources,
        hdrs = headers,
        deps = deps + ["//third_party:protobuf"],
        testonly = testonly,
        visibility = visibility,
    )
