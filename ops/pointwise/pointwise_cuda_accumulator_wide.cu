// The accumulator kernels of 8 and 16 lanes (pointwise_cuda_accumulator.cuh), in their
// own translation unit: built with nvcc's --jump-table-density (ops/pointwise/BUILD), so
// that an instruction's dispatch is one indexed branch (BRX) instead of a binary search of
// compares and branches.
#include "ops/pointwise/pointwise_cuda_accumulator.cuh"

namespace opsched::pointwise::gpu_kernels {

gpuError_t LaunchAccumulatorWide(const Bytecode& bc, const AccCode& code, const TensorPointers& p,
                                 const LaunchConfig& c, int vector, gpuStream_t stream) {
  switch (vector) {
    case 8: return Launch<8>(bc, code, p, c, stream);
    case 16: return Launch<16>(bc, code, p, c, stream);
    default: return gpuErrorInvalidValue;
  }
}

}  // namespace opsched::pointwise::gpu_kernels
