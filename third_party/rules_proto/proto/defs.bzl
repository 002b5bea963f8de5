"""Offline shim of rules_proto. The project generates C++ from .proto files with
the system protoc through //third_party:proto.bzl, not through these rules."""

def proto_library(**attrs):
    native.proto_library(**attrs)

def proto_lang_toolchain(**attrs):
    native.proto_lang_toolchain(**attrs)

def rules_proto_dependencies():
    pass

def rules_proto_toolchains():
    pass
