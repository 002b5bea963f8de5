"""cc_proto / cc_grpc: C++ code from .proto files with the system protoc and
grpc_cpp_plugin (offline).

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

def cc_grpc(name, srcs, deps, visibility = None, testonly = False):
    """C++ gRPC service stubs with the system grpc_cpp_plugin (offline).

    Example:
        cc_proto(name = "rpc_cc_proto", srcs = ["rpc.proto"])
        cc_grpc(name = "rpc_cc_grpc", srcs = ["rpc.proto"], deps = [":rpc_cc_proto"])

    gives a cc_library `rpc_cc_grpc` whose header is `<pkg>/rpc.grpc.pb.h`
    (the services' stubs) and which also exports the messages of `deps`.
    `srcs` are the .proto files that define services; `deps` are the cc_proto
    targets holding their messages (normally one, over the same srcs).
    """
    headers = [src[:-len(".proto")] + ".grpc.pb.h" for src in srcs]
    sources = [src[:-len(".proto")] + ".grpc.pb.cc" for src in srcs]
    native.genrule(
        name = name + "_protoc",
        srcs = srcs + [dep + "_srcs" for dep in deps],
        outs = headers + sources,
        cmd = "protoc --proto_path=. --grpc_out=$(GENDIR) " +
              "--plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) " +
              " ".join(["$(location %s)" % src for src in srcs]),
        testonly = testonly,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = sources,
        hdrs = headers,
        deps = deps + ["//third_party:grpc"],
        testonly = testonly,
        visibility = visibility,
    )
