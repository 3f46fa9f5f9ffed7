// The conv2d problem as the kernels see it: plain data shared by the CPU and GPU
// implementations and the cuDNN/cuBLAS externs (no vendor or opsched headers, so nvcc
// and hipcc compile it alike).
//
// Every tensor is addressed through its own element strides in logical (n, c, h, w)
// order, whatever the layout: for layout nchw the shapes are x [N,C,H,W], w [K,C/G,R,S],
// y/dy [N,K,P,Q]; for nhwc x [N,H,W,C], w [K,R,S,C/G], y/dy [N,P,Q,K]. The strides
// below are already permuted into (n, c, h, w) order (for w: (k, c, r, s)), so a kernel
// reads x[n*xs[0] + c*xs[1] + h*xs[2] + w*xs[3]] in either layout. Outputs (y, dx, dw)
// are contiguous in the workload's layout; inputs may have any strides.
//
//   y[n,k,p,q] = act(b[k] + sum_{c in group(k), r, s} x[n, c, p*sh - ph + r*dh,
//                                                        q*sw - pw + s*dw] * w[k, c', r, s])
// with taps outside the input skipped (zero padding), G groups of C/G input and K/G
// output channels, c' = c - group(k) * C/G.
#pragma once

#include <cstdint>

namespace opsched::conv2d {

enum class Kind : int32_t { kForward = 0, kBiasActivation = 1, kBackward = 2 };
enum class Layout : int32_t { kNchw = 0, kNhwc = 1 };
// fp32: strict IEEE single precision products and sums. tf32: inputs of the products
// may be rounded to TF32 (10-bit mantissa) by tensor cores; accumulation stays f32.
enum class Math : int32_t { kFp32 = 0, kTf32 = 1 };
enum class Activation : int32_t { kIdentity = 0, kRelu = 1, kSigmoid = 2, kTanh = 3 };
enum class ElementType : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2 };

struct Problem {
  Kind kind = Kind::kForward;
  Layout layout = Layout::kNchw;
  Math math = Math::kFp32;
  Activation act = Activation::kIdentity;  // kBiasActivation only
  ElementType type = ElementType::kF32;    // every tensor has this type
  int64_t n = 0, c = 0, h = 0, w = 0;      // input batch, channels, height, width
  int64_t k = 0, r = 0, s = 0;             // output channels, filter height, width
  int64_t p = 0, q = 0;                    // output height, width
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t groups = 1;
  // Element strides in logical order: x and y/dy/dx (n, c, h, w); w and dw (k, c, r, s).
  int64_t x_strides[4] = {};
  int64_t w_strides[4] = {};
  int64_t y_strides[4] = {};   // y (forward) or dy (backward)
  int64_t dx_strides[4] = {};  // backward: dx, contiguous in the layout
  int64_t dw_strides[4] = {};  // backward: dw, contiguous in the layout
  int64_t b_stride = 1;        // bias (kBiasActivation)

  // Forward and kBiasActivation: inputs x, w (, b), output y.
  // kBackward: inputs x, w, dy; outputs dx, dw (y holds dy).
  const void* x = nullptr;
  const void* wt = nullptr;
  const void* b = nullptr;
  void* y = nullptr;  // forward output; kBackward: dy (read only)
  void* dx = nullptr;
  void* dw = nullptr;

  int64_t channels_per_group() const { return c / groups; }   // C/G
  int64_t filters_per_group() const { return k / groups; }    // K/G
  // Terms summed into one output of the forward pass.
  int64_t reduction_length() const { return channels_per_group() * r * s; }
};

inline constexpr int64_t ElementBytes(ElementType type) { return type == ElementType::kF32 ? 4 : 2; }

// Output size of one spatial dimension (0 when the window does not fit).
inline constexpr int64_t OutputSize(int64_t in, int64_t filter, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t span = dilation * (filter - 1) + 1;
  return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / stride + 1;
}

}  // namespace opsched::conv2d
