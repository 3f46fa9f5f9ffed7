"""Repository rule that detects the GPU toolchains and writes @local_config_gpu.

It looks for the CUDA toolkit (nvcc, cudart, cuBLAS, cuDNN and the CUB headers) and for
hipcc. What it finds decides what the build compiles: with nothing found, the build is
CPU-only and every GPU target is an empty library, so `bazel build //...` still passes.

Environment (each change re-runs the detection):
  CUDA_PATH               toolkit root (default /usr/local/cuda)
  OPSCHED_DISABLE_CUDA=1  build CPU-only even when a toolkit is present
  OPSCHED_CUDA_ARCHS      compute capabilities, comma separated (default 80,90); PTX of the
                          highest one is embedded too
  HIPCC                   hipcc to use (default: hipcc on PATH)
  OPSCHED_DISABLE_HIP=1   skip the HIP compile check
  OPSCHED_HIP_ARCH        AMD target of the HIP compile check (default gfx90a)
"""

_ENV = [
    "CUDA_PATH",
    "OPSCHED_DISABLE_CUDA",
    "OPSCHED_CUDA_ARCHS",
    "HIPCC",
    "OPSCHED_DISABLE_HIP",
    "OPSCHED_HIP_ARCH",
]

def _exists(rctx, path):
    return rctx.path(path).exists

def _first_existing(rctx, candidates):
    for c in candidates:
        if _exists(rctx, c):
            return c
    return None

def _header_define(rctx, header, name):
    """Returns the integer value of `#define name N` in header, or 0."""
    if not header or not _exists(rctx, header):
        return 0
    for line in rctx.read(header).splitlines():
        parts = [p for p in line.replace("\t", " ").split(" ") if p]
        if len(parts) >= 3 and parts[0] == "#define" and parts[1] == name and parts[2].isdigit():
            return int(parts[2])
    return 0

def _find_cuda(rctx):
    if rctx.os.environ.get("OPSCHED_DISABLE_CUDA", "0") == "1":
        return None, "disabled by OPSCHED_DISABLE_CUDA=1"
    root = rctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    nvcc = root + "/bin/nvcc"
    if not _exists(rctx, nvcc):
        return None, "no nvcc at " + nvcc
    cudart = _first_existing(rctx, [root + "/lib64/libcudart_static.a", root + "/lib/x64/libcudart_static.a"])
    if not cudart:
        return None, "no libcudart_static.a under " + root
    if not _exists(rctx, root + "/include/cub/cub.cuh") and not _exists(rctx, root + "/include/cccl/cub/cub.cuh"):
        return None, "no CUB headers under " + root + "/include"
    libdir = cudart.rpartition("/")[0]
    cublas = _exists(rctx, libdir + "/libcublas.so") and _exists(rctx, root + "/include/cublas_v2.h")
    cudnn_header = _first_existing(rctx, [
        root + "/include/cudnn_version.h",
        "/usr/include/cudnn_version.h",
        "/usr/include/x86_64-linux-gnu/cudnn_version.h",
        "/usr/local/include/cudnn_version.h",
    ])
    cudnn_lib = _first_existing(rctx, [
        libdir + "/libcudnn.so",
        "/usr/lib/x86_64-linux-gnu/libcudnn.so",
    ])
    return struct(
        root = root,
        nvcc = nvcc,
        libdir = libdir,
        cublas = cublas,
        cudnn_header_dir = cudnn_header.rpartition("/")[0] if cudnn_header and cudnn_lib else None,
        cudnn_libdir = cudnn_lib.rpartition("/")[0] if cudnn_header and cudnn_lib else None,
        cudnn_major = _header_define(rctx, cudnn_header, "CUDNN_MAJOR"),
        cudnn_minor = _header_define(rctx, cudnn_header, "CUDNN_MINOR"),
    ), "found at " + root

def _find_hip(rctx):
    if rctx.os.environ.get("OPSCHED_DISABLE_HIP", "0") == "1":
        return None, "disabled by OPSCHED_DISABLE_HIP=1"
    hipcc = rctx.os.environ.get("HIPCC", "")
    if not hipcc:
        found = rctx.which("hipcc")
        hipcc = str(found) if found else ""
    if not hipcc or not _exists(rctx, hipcc):
        return None, "no hipcc on PATH"
    if not _exists(rctx, "/usr/include/hip/hip_runtime.h") and not _exists(rctx, "/opt/rocm/include/hip/hip_runtime.h"):
        return None, "hipcc found but no hip/hip_runtime.h"
    return hipcc, "found at " + hipcc

_CUDA_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "cuda_headers",
    hdrs = glob(["cuda/include/**"], allow_empty = True),
    includes = ["cuda/include"],
)

cc_library(
    name = "cudart",
    srcs = ["cuda/lib/libcudart_static.a"],
    linkopts = ["-ldl", "-lrt", "-lpthread"],
    deps = [":cuda_headers"],
)

cc_library(
    name = "cublas",
    linkopts = {cublas_linkopts},
    deps = [":cudart"],
)

cc_library(
    name = "cudnn",
    hdrs = glob(["cudnn/include/cudnn*.h"], allow_empty = True),
    includes = ["cudnn/include"],
    linkopts = {cudnn_linkopts},
    deps = [":cudart"],
)
"""

_NO_CUDA_BUILD = """
package(default_visibility = ["//visibility:public"])

# CPU-only build: no CUDA toolkit was found ({reason}).
cc_library(name = "cuda_headers")

cc_library(name = "cudart")

cc_library(name = "cublas")

cc_library(name = "cudnn")
"""

_DEFS = """
# Written by //bazel:gpu_configure.bzl; do not edit.
CUDA_ENABLED = {cuda_enabled}
CUDA_REASON = "{cuda_reason}"
NVCC = "{nvcc}"
CUDA_ARCHS = {cuda_archs}
CUBLAS_ENABLED = {cublas_enabled}
CUDNN_ENABLED = {cudnn_enabled}
CUDNN_VERSION = "{cudnn_version}"
HIP_ENABLED = {hip_enabled}
HIP_REASON = "{hip_reason}"
HIPCC = "{hipcc}"
HIP_ARCH = "{hip_arch}"

def if_cuda(if_true, if_false = []):
    return if_true if CUDA_ENABLED else if_false

def if_cublas(if_true, if_false = []):
    return if_true if CUBLAS_ENABLED else if_false

def if_cudnn(if_true, if_false = []):
    return if_true if CUDNN_ENABLED else if_false

def if_hip(if_true, if_false = []):
    return if_true if HIP_ENABLED else if_false
"""

def _gpu_configure_impl(rctx):
    cuda, cuda_reason = _find_cuda(rctx)
    hipcc, hip_reason = _find_hip(rctx)
    archs = [a.strip() for a in rctx.os.environ.get("OPSCHED_CUDA_ARCHS", "80,90").split(",") if a.strip()]

    if cuda:
        rctx.symlink(cuda.root + "/include", "cuda/include")
        rctx.symlink(cuda.libdir + "/libcudart_static.a", "cuda/lib/libcudart_static.a")
        rpath = "-Wl,-rpath," + cuda.libdir
        cublas_linkopts = ["-L" + cuda.libdir, "-lcublas", rpath] if cuda.cublas else []
        cudnn_linkopts = []
        if cuda.cudnn_header_dir:
            if cuda.cudnn_header_dir != cuda.root + "/include":
                for h in ["cudnn.h", "cudnn_version.h"]:
                    rctx.symlink(cuda.cudnn_header_dir + "/" + h, "cudnn/include/" + h)
            cudnn_linkopts = ["-L" + cuda.cudnn_libdir, "-lcudnn", "-Wl,-rpath," + cuda.cudnn_libdir]
        rctx.file("BUILD", _CUDA_BUILD.format(
            cublas_linkopts = repr(cublas_linkopts),
            cudnn_linkopts = repr(cudnn_linkopts),
        ))
    else:
        rctx.file("BUILD", _NO_CUDA_BUILD.format(reason = cuda_reason))

    rctx.file("defs.bzl", _DEFS.format(
        cuda_enabled = "True" if cuda else "False",
        cuda_reason = cuda_reason,
        nvcc = cuda.nvcc if cuda else "",
        cuda_archs = repr(archs),
        cublas_enabled = "True" if cuda and cuda.cublas else "False",
        cudnn_enabled = "True" if cuda and cuda.cudnn_header_dir else "False",
        cudnn_version = "%d.%d" % (cuda.cudnn_major, cuda.cudnn_minor) if cuda and cuda.cudnn_header_dir else "",
        hip_enabled = "True" if hipcc else "False",
        hip_reason = hip_reason,
        hipcc = hipcc or "",
        hip_arch = rctx.os.environ.get("OPSCHED_HIP_ARCH", "gfx90a"),
    ))

gpu_configure = repository_rule(
    implementation = _gpu_configure_impl,
    environ = _ENV,
    local = True,
)
