// Pointwise kernels on the GPU (CUDA, and a HIP compile check). Launchers queue work on
// a stream and return the launch error; none synchronises the host.
//   LaunchInterpreted  one prebuilt kernel running the program. Private slots: the
//                      accumulator form (pointwise_accumulator.h) with the accumulator in
//                      registers; each thread takes `vector` elements at a time,
//                      consecutive or, at 16, spread over its warp's span in 16-byte
//                      chunks (SpreadChunk, pointwise_bytecode.h); 16-byte loads and
//                      stores where a tensor is contiguous there and aligned, a
//                      broadcast input read once; `items` such groups per grid
//                      step. Shared slots: a block runs each bytecode instruction over
//                      a tile of block * vector elements kept in shared memory. Grid-stride
//                      over the iteration space either way.
//   LaunchChain        templated kernels for the chains of pointwise_match.h: no bytecode,
//                      every input periodic in the row-major output order.
//   LaunchBatchNorm    batch-norm inference with per-channel statistics
//                      (pointwise_batchnorm.h), no bytecode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/gpu/fast_divmod.h"
#include "core/gpu/portability.h"
#include "ops/pointwise/pointwise_accumulator.h"
#include "ops/pointwise/pointwise_batchnorm_math.h"
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise::gpu_kernels {

struct LaunchConfig {
  int block = 256;
  int vector = 4;  // 1, 2, 4, 8 or 16 (interpreter only) consecutive elements per thread and group
  int items = 1;   // groups per thread and grid step
  // The interpreter's slots: false, the accumulator form (registers and a private spill
  // array, V lanes wide); true, a shared-memory tile of block * vector elements (vector
  // elements per thread, strided) running the bytecode.
  bool shared_slots = false;
};

// The private-slot interpreter's largest block (its kernel's launch bound): 512 threads,
// 256 with 16 lanes a thread (whose registers would not fit 512).
inline constexpr int kMaxInterpretedBlock = 512;
inline constexpr int MaxInterpretedBlock(int vector) { return vector >= 16 ? 256 : kMaxInterpretedBlock; }

// The shared-memory tile's size; at most kMaxTileSharedBytes (no opt-in beyond 48 KiB).
inline constexpr size_t kMaxTileSharedBytes = 48 * 1024;
size_t TileSharedBytes(const Bytecode& bc, const LaunchConfig& c);

// The shared memory a block of the private-slot interpreter takes for its spill slots
// (code.num_spills slots of `vector` floats per thread). At most kMaxTileSharedBytes
// keeps them there; beyond, they go to registers (up to kRegisterSpillSlots) or local
// memory.
size_t SpillSharedBytes(const AccCode& code, int vector, int block);
// Whether the shared placement has a kernel for `block` threads (a template parameter:
// 128, 256 or 512 within MaxInterpretedBlock); other blocks keep the slots in registers
// or local memory.
bool SharedSpillBlock(int block, int vector);

// Whether `vector` consecutive elements stay within one run of the innermost dimension.
bool VectorFits(const Bytecode& bc, int vector);
// `code` is `bc` in accumulator form (ToAccumulatorForm).
gpuError_t LaunchInterpreted(const Bytecode& bc, const AccCode& code, const TensorPointers& p,
                             const LaunchConfig& c, gpuStream_t stream);

// The chains (numbering shared with pointwise_cuda_impls.cc).
enum class ChainKind : int { kBiasAct = 0, kScaleResidual = 1, kScaleResidualConst = 2, kActivation = 3, kLstmCell = 4 };

struct ChainArgs {
  ChainKind kind = ChainKind::kActivation;
  OpCode act = OpCode::kGelu;  // kBiasAct, kActivation
  ElementType type = ElementType::kF32;  // of every tensor
  int inputs = 0;                        // in role order (pointwise_match.h)
  int outputs = 0;                       // kLstmCell: c' then h
  const void* in[5] = {};
  void* out[2] = {};
  int64_t period[5] = {};  // element i reads in[k][i % period[k]]
  FastDivmod by_period[5];  // period[k] as a divisor (Prepare sets it: SetPeriods)
  float constant = 0;       // kScaleResidualConst's scale
  int64_t numel = 0;        // below 2^32 (the chain kernels index in 32 bits)
};
// Fills by_period from period (each in [1, 2^32)).
inline void SetPeriods(ChainArgs& a) {
  for (int k = 0; k < a.inputs; ++k) a.by_period[k] = FastDivmod(static_cast<uint32_t>(a.period[k]));
}
gpuError_t LaunchChain(const ChainArgs& a, const LaunchConfig& c, gpuStream_t stream);

// Batch-norm inference (pointwise_batchnorm.h): out = clamps(act((x - m) * g * rsqrt(v + eps) + b)).
// Element i belongs to channel (i / inner) % channels. A thread takes `vector`
// consecutive elements at a time: of one channel where inner > 1 (vector dividing
// inner), of `vector` consecutive channels where inner is 1 (vector dividing channels);
// it reads a channel's statistics once for as long as its elements stay in the channel.
struct BatchNormArgs {
  ElementType type = ElementType::kF32;  // of x and out
  ElementType param_type[4] = {};        // m, v, g, b
  const void* x = nullptr;
  const void* param[4] = {};             // nullptr: g or b absent
  void* out = nullptr;
  int channel_stride[4] = {};            // 1: per channel; 0: one element
  float eps = 0;
  float factor = 1;                      // a constant factor of the scale
  bool gate = false;                     // g enters as sigmoid(g)
  OpCode act = OpCode::kCastF32;         // kCastF32: none
  Bound bound[kMaxBounds];               // clamps after act, the inner one first
  int64_t numel = 0;                     // below 2^32
  int64_t channels = 1;
  int64_t inner = 1;
};
// The widest of 16 (f16 and bf16 only), 8, 4, 2, 1 up to `vector` that the plan's runs
// allow.
int BatchNormVector(const BatchNormArgs& a, int vector);
// The kernel's largest block at `vector` lanes: 512 with 16 (their registers), else 1024.
inline constexpr int MaxBatchNormBlock(int vector) { return vector >= 16 ? 512 : 1024; }
// wave_blocks (channels-last): the blocks one wave of the device holds for this kernel
// and config (BatchNormWaveBlocks, at Prepare); 0: the H100's, from its 132 SMs of 2048
// threads. (Not a field of the kernel's arguments: one more took the plain 8-lane
// kernels from 47 registers to 50.) dependent: launched as the dependent of the kernel
// before it in the stream (core/gpu/dependent_launch.cuh), which writes none of x and out
// (a hoisted plan's last first pass).
gpuError_t LaunchBatchNorm(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream, int wave_blocks = 0,
                           bool dependent = false);
// Channels-last (inner 1): how many blocks of the kernel that LaunchBatchNorm would launch
// for `a` and `c` one wave of the current device holds (occupancy times SMs); 0 where
// inner > 1 or the query fails.
int BatchNormWaveBlocks(const BatchNormArgs& a, const LaunchConfig& c);

}  // namespace opsched::pointwise::gpu_kernels
