// CPU loops over a pointwise iteration space: runs of the innermost dimension with every
// tensor's offset at the run's start, the thread/chunk split shared by the CPU
// implementations, and the interpreter's loop over them.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/tensor.h"
#include "ops/pointwise/pointwise_interpret.h"

namespace opsched::pointwise::cpu {

// fn(offsets, count, inner): `count` elements from the row-major position whose tensor
// offsets are `offsets`, each next element `inner[t]` further along tensor t.
template <typename Fn>
void ForEachRun(const Bytecode& bc, int64_t begin, int64_t end, Fn&& fn) {
  int64_t offsets[kMaxTensors];
  int64_t inner[kMaxTensors] = {};
  const int tensors = bc.num_inputs + bc.num_outputs;
  const int64_t length = bc.rank > 0 ? bc.shape[bc.rank - 1] : 1;
  for (int t = 0; t < tensors; ++t) inner[t] = bc.rank > 0 ? bc.strides[t][bc.rank - 1] : 0;
  for (int64_t i = begin; i < end;) {
    Offsets(bc, i, offsets);
    const int64_t count = std::min(end - i, length - i % length);
    fn(offsets, count, static_cast<const int64_t*>(inner));
    i += count;
  }
}

// body(begin, end) over [0, n) in chunks of `chunk`, on `threads` threads.
template <typename Body>
void Parallel(int64_t n, int64_t chunk, int threads, Body&& body) {
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (threads <= 1 || chunks <= 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) body(c * chunk, std::min(n, (c + 1) * chunk));
}

// The accumulator form of `bc` over its whole iteration space.
inline void Interpret(const Bytecode& bc, const AccCode& code, const TensorPointers& p, int threads, int64_t chunk) {
  const int tensors = bc.num_inputs + bc.num_outputs;
  Parallel(bc.numel, chunk, threads, [&](int64_t begin, int64_t end) {
    ForEachRun(bc, begin, end, [&](int64_t* off, int64_t count, const int64_t* inner) {
      for (int64_t k = 0; k < count; ++k) {
        RunAccumulated(bc, code, p, off);
        for (int t = 0; t < tensors; ++t) off[t] += inner[t];
      }
    });
  });
}

// The bytecode's tensor pointers from Run's tensors (inputs then outputs).
inline TensorPointers PointersOf(const Tensor* tensors, int count) {
  TensorPointers p;
  for (int t = 0; t < count; ++t) p.data[t] = tensors[t].data;
  return p;
}

}  // namespace opsched::pointwise::cpu
