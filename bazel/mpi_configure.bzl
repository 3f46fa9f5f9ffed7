"""Repository rule that detects Open MPI and writes @local_config_mpi.

`opsched tune --mpi` spreads a tuning run over MPI ranks (tuner/fleet_mpi.cc). The build
uses Debian's Open MPI (libopenmpi-dev) when its headers and library are present; without
them the `mpi` target is empty, MPI_ENABLED is False and `--mpi` says the build has no MPI.

Environment (each change re-runs the detection):
  OPSCHED_MPI_HOME       Open MPI root holding include/mpi.h and lib/libmpi.so
                         (default /usr/lib/x86_64-linux-gnu/openmpi)
  OPSCHED_DISABLE_MPI=1  build without MPI even when it is present
"""

_ENV = ["OPSCHED_MPI_HOME", "OPSCHED_DISABLE_MPI"]

_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "mpi",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
    linkopts = {linkopts},
)
"""

_NO_BUILD = """
package(default_visibility = ["//visibility:public"])

# No MPI ({reason}).
cc_library(name = "mpi")
"""

_DEFS = """
# Written by //bazel:mpi_configure.bzl; do not edit.
MPI_ENABLED = {enabled}
MPI_REASON = "{reason}"

def if_mpi(if_true, if_false = []):
    return if_true if MPI_ENABLED else if_false
"""

def _mpi_configure_impl(rctx):
    home = rctx.os.environ.get("OPSCHED_MPI_HOME", "/usr/lib/x86_64-linux-gnu/openmpi")
    reason = ""
    enabled = False
    if rctx.os.environ.get("OPSCHED_DISABLE_MPI", "0") == "1":
        reason = "disabled by OPSCHED_DISABLE_MPI=1"
    elif not rctx.path(home + "/include/mpi.h").exists:
        reason = "no mpi.h under " + home + "/include (install libopenmpi-dev)"
    elif not rctx.path(home + "/lib/libmpi.so").exists:
        reason = "no libmpi.so under " + home + "/lib"
    else:
        enabled = True
        reason = "found at " + home
    if enabled:
        rctx.symlink(home + "/include", "include")
        libdir = home + "/lib"
        rctx.file("BUILD", _BUILD.format(linkopts = repr(["-L" + libdir, "-lmpi", "-Wl,-rpath," + libdir])))
    else:
        rctx.file("BUILD", _NO_BUILD.format(reason = reason))
    rctx.file("defs.bzl", _DEFS.format(enabled = "True" if enabled else "False", reason = reason))

mpi_configure = repository_rule(
    implementation = _mpi_configure_impl,
    environ = _ENV,
    local = True,
)
