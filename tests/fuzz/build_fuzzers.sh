#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with Debian's clang-14
# (-fsanitize=fuzzer,address,undefined) into OUT (default .fuzz/build).
#
# Bazel's toolchain here is gcc, which has no libFuzzer, so the fuzzers are built
# outside Bazel, from exactly the sources their corpus tests depend on
# (//tests/fuzz:<name>_fuzzer_corpus_test, read with `bazel query`, CPU-only), with the
# same Debian libraries (protobuf, abseil, fmt, spdlog, zlib) and a protoc run for the
# .proto files. make rebuilds only what changed, one job a core. Needs clang-14 and libclang-rt-14-dev
# (tools/setup.sh installs them) and libomp-14-dev for the ops' OpenMP loops.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-.fuzz/build}"
targets=(workload records_log json_import baseline)
cxx="${CXX_FUZZ:-clang++-14}"
command -v "$cxx" >/dev/null || { echo "build_fuzzers: $cxx not found (tools/setup.sh installs clang-14)" >&2; exit 1; }
mkdir -p "$out/gen"
out_abs="$(cd "$out" && pwd)"  # OUT may be relative or absolute
export OPSCHED_DISABLE_CUDA=1 OPSCHED_DISABLE_HIP=1  # fuzzing runs on the CPU

# Per target: its .cc and .proto sources, and the defines, copts and linkopts of its
# dependencies.
python3 - "$out" "${targets[@]}" <<'PY'
import re, subprocess, sys
out, targets = sys.argv[1], sys.argv[2:]

def query(expr, output):
    return subprocess.run(["bazel", "query", expr, "--output=" + output],
                          check=True, capture_output=True, text=True).stdout

def strings(rule_text, attr):
    m = re.search(r"\b%s = \[(.*?)\]" % attr, rule_text, re.S)
    return re.findall(r'"([^"]*)"', m.group(1)) if m else []

rules = []
makefile = []
all_objs = set()
all_protos = set()
for t in targets:
    label = "//tests/fuzz:%s_fuzzer_corpus_test" % t
    files = []
    for l in query("kind('source file', deps(%s))" % label, "label").split():
        if l.startswith("@") or not (l.endswith(".cc") or l.endswith(".proto")):
            continue
        path = l.lstrip("/").replace(":", "/")
        if path.endswith("corpus_main.cc"):
            continue
        files.append(path)
    defines, copts, linkopts = [], [], []
    for rule in query("kind('cc_library|cc_test', deps(%s))" % label, "build").split("\n\n"):
        for v in strings(rule, "defines"):
            if v not in defines: defines.append(v)
        for v in strings(rule, "copts"):
            if v not in copts: copts.append(v)
        for v in strings(rule, "linkopts"):
            if v not in linkopts: linkopts.append(v)
    protos = [f for f in files if f.endswith(".proto")]
    sources = [f for f in files if f.endswith(".cc")] + ["gen/" + p[:-len(".proto")] + ".pb.cc" for p in protos]
    objs = ["obj/%s.o" % s for s in sources]
    all_objs.update(zip(objs, sources))
    makefile.append("FLAGS_%s := %s" % (t, " ".join(["-D" + d for d in defines] + copts)))
    makefile.append("%s_fuzzer: %s\n\t$(CXX) $(LINKFLAGS) %s -o $@ %s %s" % (
        t, " ".join(objs), "-fopenmp" if "-fopenmp" in linkopts else "", " ".join(objs),
        " ".join(o for o in linkopts if o != "-fopenmp")))
    all_protos.update(protos)
    rules.append((t, sources))
# One compile rule per object (flags: the union over targets, which share defines).
flags = " ".join("$(FLAGS_%s)" % t for t, _ in rules)
for obj, src in sorted(all_objs):
    srcpath = src if src.startswith("gen/") else "$(ROOT)/" + src
    makefile.append("%s: %s | protos\n\t@mkdir -p $(dir $@)\n\t$(CXX) $(CXXFLAGS) %s -MMD -MP -c %s -o $@" % (
        obj, srcpath, flags, srcpath))
for p in sorted(all_protos):
    makefile.append("gen/%s.pb.cc: $(ROOT)/%s\n\tprotoc --cpp_out=gen -I$(ROOT) $(ROOT)/%s" % (p[:-6], p, p))
makefile.append("protos: %s" % " ".join("gen/%s.pb.cc" % p[:-6] for p in sorted(all_protos)))
makefile.append("all: %s" % " ".join("%s_fuzzer" % t for t, _ in rules))
makefile.append("-include $(shell find obj -name '*.d' 2>/dev/null)")
with open(out + "/rules.mk", "w") as f:
    f.write("\n".join(makefile) + "\n")
PY

root="$(pwd)"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
make -s -j"$(nproc)" -C "$out" -f rules.mk all \
  ROOT="$root" CXX="$cxx" \
  CXXFLAGS="-std=c++20 -O1 -g1 -fno-omit-frame-pointer $sanitize -fsanitize=fuzzer-no-link -I$root -I$out_abs/gen -w" \
  LINKFLAGS="$sanitize -fsanitize=fuzzer"
for t in "${targets[@]}"; do echo "build_fuzzers: $out/${t}_fuzzer"; done
