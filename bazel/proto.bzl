"""cc_proto: compile one .proto with Debian's protoc and wrap the C++ in a cc_library."""

def cc_proto(name, src, deps = [], imports = [], visibility = None):
    """`imports`: the .proto files `src` imports (labels), available to protoc."""
    base = src[:-len(".proto")]
    native.genrule(
        name = name + "_protoc",
        srcs = [src] + imports,
        outs = [base + ".pb.h", base + ".pb.cc"],
        cmd = "$(location //third_party:protoc) --cpp_out=$(GENDIR) $(location %s)" % src,
        tools = ["//third_party:protoc"],
    )
    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"],
        hdrs = [base + ".pb.h"],
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
    )
