// Device-wide algorithms from the vendor library: CUB on CUDA, rocPRIM on HIP. Both
// follow the two-call convention (a null temp pointer asks for the temp size) and run on
// a stream without synchronising the host.
#pragma once

#include <cstddef>

#include "core/gpu/portability.h"

#if defined(OPSCHED_HIP)
#include <rocprim/rocprim.hpp>
#else
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#endif

namespace opsched::gpu {

// Stable sort of (key, value) pairs by the key bits [begin_bit, end_bit).
template <typename K, typename V>
gpuError_t SortPairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                     const V* values_in, V* values_out, int64_t n, int end_bit,
                     gpuStream_t stream, int begin_bit = 0) {
#if defined(OPSCHED_HIP)
  return rocprim::radix_sort_pairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                   static_cast<size_t>(n), begin_bit, end_bit, stream);
#else
  return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in,
                                         values_out, n, begin_bit, end_bit, stream);
#endif
}

// For each run of equal consecutive keys: the key and the reduction of its values, in
// order; the number of runs is written to *num_runs on the device.
template <typename K, typename V, typename Op, typename N>
gpuError_t ReduceByKey(void* temp, size_t& temp_bytes, const K* keys_in, K* unique_out,
                       const V* values_in, V* aggregates_out, N* num_runs, Op op, int64_t n,
                       gpuStream_t stream) {
#if defined(OPSCHED_HIP)
  return rocprim::reduce_by_key(temp, temp_bytes, keys_in, values_in, static_cast<size_t>(n),
                                unique_out, aggregates_out, num_runs, op,
                                rocprim::equal_to<K>(), stream);
#else
  return cub::DeviceReduce::ReduceByKey(temp, temp_bytes, keys_in, unique_out, values_in,
                                        aggregates_out, num_runs, op, n, stream);
#endif
}

}  // namespace opsched::gpu
