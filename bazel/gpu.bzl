"""cuda_library / hip_library: compile .cu kernels with nvcc or hipcc inside Bazel.

An op adds its kernels with one line:

    gpu_library(name = "scatter_kernels", srcs = ["scatter_cuda.cu"], hdrs = [...], deps = [...])

gpu_library = cuda_library (objects linked into a cc_library, static cudart) plus, when hipcc
is present, hip_library (the same sources compiled for an AMD target: a compile check, since
no AMD GPU exists to run them). Without a CUDA toolkit the cc_library is empty and callers
guard their use of it with if_cuda().
"""

load(
    "@local_config_gpu//:defs.bzl",
    "CUDA_ARCHS",
    "CUDA_ENABLED",
    "HIPCC",
    "HIP_ARCH",
    "HIP_ENABLED",
    "NVCC",
)

_COMMON_FLAGS = ["-O3", "-std=c++20", "-DNDEBUG"]

def _include_flags(cc_ctx, skip = None):
    flags = []
    for d in cc_ctx.defines.to_list():
        flags.append("-D" + d)
    for i in cc_ctx.quote_includes.to_list() + cc_ctx.includes.to_list():
        if skip and skip in i:
            continue
        flags += ["-I", i]
    for i in cc_ctx.system_includes.to_list():
        if skip and skip in i:
            continue
        flags += ["-isystem", i]
    return flags

def _compile_objects(ctx, compiler, flags, mnemonic, skip_include = None, extra_copts = []):
    cc_ctx = cc_common.merge_cc_infos(
        cc_infos = [d[CcInfo] for d in ctx.attr.deps],
    ).compilation_context
    inputs = depset(ctx.files.srcs + ctx.files.hdrs, transitive = [cc_ctx.headers])
    base = flags + _include_flags(cc_ctx, skip_include) + ["-I", ".", "-I", ctx.bin_dir.path] + ctx.attr.copts + extra_copts
    objs = []
    for src in ctx.files.srcs:
        out = ctx.actions.declare_file("_%s/%s/%s.o" % (mnemonic.lower(), ctx.label.name, src.basename))
        ctx.actions.run(
            executable = compiler,
            arguments = base + ["-c", src.path, "-o", out.path],
            inputs = inputs,
            outputs = [out],
            mnemonic = mnemonic,
            progress_message = "%s %s" % (mnemonic, src.short_path),
            use_default_shell_env = True,
        )
        objs.append(out)
    return [DefaultInfo(files = depset(objs))]

def _nvcc_flags():
    flags = list(_COMMON_FLAGS) + [
        "-Xcompiler", "-fPIC",
        "--expt-relaxed-constexpr",
        "-DOPSCHED_CUDA=1",
        # Intermediate files beside the object: two sandboxed nvcc runs see the same
        # process id in their own namespaces and would collide on /tmp/tmpxft_<pid>_*.
        "--objdir-as-tempdir",
    ]
    for arch in CUDA_ARCHS:
        flags.append("-gencode=arch=compute_%s,code=sm_%s" % (arch, arch))
    if CUDA_ARCHS:
        top = CUDA_ARCHS[-1]
        flags.append("-gencode=arch=compute_%s,code=compute_%s" % (top, top))
    return flags

def _cuda_objects_impl(ctx):
    return _compile_objects(ctx, NVCC, _nvcc_flags(), "Nvcc", extra_copts = ctx.attr.cuda_copts)

def _hip_objects_impl(ctx):
    flags = _COMMON_FLAGS + [
        "-x", "hip",
        "--offload-arch=" + HIP_ARCH,
        "-fPIC",
        "-DOPSCHED_HIP=1",
        "-Wno-unused-result",
    ]
    return _compile_objects(ctx, HIPCC, flags, "Hipcc", skip_include = "local_config_gpu/cuda")

_ATTRS = {
    "srcs": attr.label_list(allow_files = [".cu", ".cc"]),
    "hdrs": attr.label_list(allow_files = [".h", ".cuh"]),
    "deps": attr.label_list(providers = [CcInfo]),
    "copts": attr.string_list(),
    "cuda_copts": attr.string_list(),  # nvcc only (hipcc does not take them)
}

_cuda_objects = rule(implementation = _cuda_objects_impl, attrs = _ATTRS)
_hip_objects = rule(implementation = _hip_objects_impl, attrs = _ATTRS)

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], cuda_copts = [], visibility = None, **kwargs):
    """A cc_library of nvcc-compiled objects (empty when no CUDA toolkit was found).

    copts go to nvcc (and hipcc, in gpu_library); cuda_copts to nvcc alone.
    """
    if not CUDA_ENABLED:
        native.cc_library(name = name, hdrs = hdrs, deps = deps, visibility = visibility, **kwargs)
        return
    _cuda_objects(
        name = name + "_nvcc",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + ["@local_config_gpu//:cuda_headers"],
        copts = copts,
        cuda_copts = cuda_copts,
    )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_nvcc"],
        hdrs = hdrs,
        deps = deps + ["@local_config_gpu//:cudart"],
        visibility = visibility,
        **kwargs
    )

def hip_library(name, srcs, hdrs = [], deps = [], copts = [], visibility = None):
    """Objects of srcs compiled by hipcc for HIP_ARCH (a compile check; nothing runs them)."""
    if not HIP_ENABLED:
        native.filegroup(name = name, srcs = [], visibility = visibility)
        return
    _hip_objects(name = name, srcs = srcs, hdrs = hdrs, deps = deps, copts = copts, visibility = visibility)

def gpu_library(name, srcs, hdrs = [], deps = [], copts = [], cuda_copts = [], visibility = None, **kwargs):
    """cuda_library `name` plus hip_library `name + "_hip"` over the same sources."""
    cuda_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps,
        copts = copts,
        cuda_copts = cuda_copts,
        visibility = visibility,
        **kwargs
    )
    hip_library(name = name + "_hip", srcs = srcs, hdrs = hdrs, deps = deps, copts = copts, visibility = visibility)
