/* opsched's stable C API: a Runtime and its ops over plain C structs and raw pointers,
 * for languages that call C (the Python package in python/ uses it through ctypes).
 * Link libopsched.so (//opsched:libopsched.so); it holds every op and implementation.
 *
 *   opsched_runtime_options o;
 *   opsched_runtime_options_init(&o);
 *   opsched_runtime* rt;
 *   if (opsched_runtime_create(&o, &rt) != OPSCHED_OK) puts(opsched_last_error());
 *   opsched_scatter(rt, &data, &indices, &updates, &out, 0, OPSCHED_SCATTER_ADD, stream);
 *   opsched_synchronize(rt, stream);  // data errors found on the device arrive here
 *   opsched_runtime_destroy(rt);
 *
 * Errors: every call returns an opsched_status (OPSCHED_OK is 0); the message of the
 * last failed call on this thread is opsched_last_error(). Nothing throws, aborts or
 * passes a C++ type across this boundary. See docs/python.md and docs/consumer-guide.md.
 *
 * Stability: functions and constants are only ever added. The option structs begin
 * with struct_size, set by their _init function, so that a newer library reads an older
 * caller's struct. OPSCHED_C_API_VERSION grows with every addition. */
#ifndef OPSCHED_C_API_H_
#define OPSCHED_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPSCHED_C_API_VERSION 2

#if defined(__GNUC__)
#define OPSCHED_C_EXPORT __attribute__((visibility("default")))
#else
#define OPSCHED_C_EXPORT
#endif

/* Status codes: the numbers of absl::StatusCode (and gRPC's), but for data errors. */
typedef int32_t opsched_status;
enum {
  OPSCHED_OK = 0,
  OPSCHED_CANCELLED = 1,
  OPSCHED_UNKNOWN = 2,
  OPSCHED_INVALID_ARGUMENT = 3,  /* shapes, dtypes, devices, strides, null pointers */
  OPSCHED_NOT_FOUND = 5,         /* a record file or model that does not exist */
  OPSCHED_RESOURCE_EXHAUSTED = 8,
  OPSCHED_FAILED_PRECONDITION = 9,
  OPSCHED_OUT_OF_RANGE = 11,     /* a data error found while running: an out-of-range
                                    scatter index; nothing was written */
  OPSCHED_UNIMPLEMENTED = 12,
  OPSCHED_INTERNAL = 13,
  OPSCHED_UNAVAILABLE = 14,
  OPSCHED_DATA_LOSS = 15
};

/* Element types (core/dtype.h). */
enum {
  OPSCHED_F32 = 0,
  OPSCHED_F16 = 1,
  OPSCHED_BF16 = 2,
  OPSCHED_I32 = 3,
  OPSCHED_I64 = 4
};

/* Device kinds (core/device.h). */
enum { OPSCHED_CPU = 0, OPSCHED_CUDA = 1, OPSCHED_HIP = 2 };

/* A tensor the caller owns: its first element, dtype, shape and strides in elements
 * (NULL strides: row-major contiguous), and the device its memory is on. */
typedef struct {
  void* data;
  int32_t dtype;
  int32_t rank;
  const int64_t* shape;
  const int64_t* strides;
  int32_t device_type;
  int32_t device_index;
} opsched_tensor;

typedef struct opsched_runtime opsched_runtime;

typedef struct {
  size_t struct_size;
  /* Where ops run; device_type -1 is the default target (the first GPU, else the CPU). */
  int32_t device_type;
  int32_t device_index;
  /* Record logs to load (opsched tune writes them). */
  const char* const* record_files;
  int32_t num_record_files;
  /* A selector model (opsched records train); NULL or "" for none. A model that cannot
   * be used leaves the runtime without it: opsched_runtime_model_error says why. */
  const char* model_file;
  int32_t deterministic;              /* deterministic implementations only */
  int32_t allow_transferred_records;  /* records of the same arch from other devices */
  /* 0: data errors found on the device are returned by opsched_synchronize (no host
   * synchronisation inside a call); 1: each call waits for its check and returns them. */
  int32_t synchronous_errors;
  /* Since version 2. A file (created when missing) collecting every workload line served
   * without an exact record, once each, for `opsched tune --suite FILE`; NULL or "" for
   * none (the Python package sets it from OPSCHED_RECORD_UNTUNED). */
  const char* record_untuned_file;
} opsched_runtime_options;

/* The numbers of this library: OPSCHED_C_API_VERSION it was built with. */
OPSCHED_C_EXPORT int32_t opsched_c_api_version(void);

/* The message of the last call on this thread that failed ("" when none has). Valid until
 * the next failing call on this thread. */
OPSCHED_C_EXPORT const char* opsched_last_error(void);

/* Sets the log level: trace, debug, info, warn, error or off (OPSCHED_LOG_LEVEL is read
 * when the library first logs). */
OPSCHED_C_EXPORT opsched_status opsched_set_log_level(const char* level);

OPSCHED_C_EXPORT void opsched_runtime_options_init(opsched_runtime_options* options);
OPSCHED_C_EXPORT opsched_status opsched_runtime_create(const opsched_runtime_options* options,
                                                       opsched_runtime** runtime);
/* NULL is ignored. Work queued before must have finished. */
OPSCHED_C_EXPORT void opsched_runtime_destroy(opsched_runtime* runtime);
/* The device the runtime runs on (OPSCHED_CPU, OPSCHED_CUDA or OPSCHED_HIP, and index). */
OPSCHED_C_EXPORT opsched_status opsched_runtime_device(const opsched_runtime* runtime, int32_t* device_type,
                                                       int32_t* device_index);
/* One line describing the runtime's target; valid while the runtime lives. */
OPSCHED_C_EXPORT const char* opsched_runtime_target(const opsched_runtime* runtime);
/* Why the model file is not used ("" when it is, or none was given). */
OPSCHED_C_EXPORT const char* opsched_runtime_model_error(const opsched_runtime* runtime);

/* Every op takes `stream`: a cudaStream_t / hipStream_t on the runtime's GPU, NULL for
 * the default stream; ignored on the CPU. Tensors live on the runtime's device. */

/* Scatter reductions (torch.Tensor.scatter_reduce with include_self=True). */
enum {
  OPSCHED_SCATTER_NONE = 0,
  OPSCHED_SCATTER_ADD = 1,
  OPSCHED_SCATTER_MUL = 2,
  OPSCHED_SCATTER_MIN = 3,
  OPSCHED_SCATTER_MAX = 4
};
/* out = data, then out[..indices[p]..] (reduction)= updates[p] along `axis`. `out` may be
 * `data` itself (in place). An out-of-range index leaves data and out untouched. */
OPSCHED_C_EXPORT opsched_status opsched_scatter(opsched_runtime* runtime, const opsched_tensor* data,
                                                const opsched_tensor* indices,
                                                const opsched_tensor* updates,
                                                const opsched_tensor* out, int64_t axis,
                                                int32_t reduction, void* stream);

enum {
  OPSCHED_REDUCE_SUM = 0,
  OPSCHED_REDUCE_MEAN = 1,
  OPSCHED_REDUCE_MAX = 2,
  OPSCHED_REDUCE_MIN = 3,
  OPSCHED_REDUCE_SUM_SQUARES = 4
};
/* y = op of x over `axes` (negative count from the end; num_axes 0: every axis). y's
 * dtype is x's or f32. */
OPSCHED_C_EXPORT opsched_status opsched_reduce(opsched_runtime* runtime, const opsched_tensor* x,
                                               const opsched_tensor* y, const int64_t* axes,
                                               int32_t num_axes, int32_t op, int32_t keepdims,
                                               void* stream);

enum { OPSCHED_NCHW = 0, OPSCHED_NHWC = 1 };
/* db[c] = sum of dy over every axis but the channel axis of `layout`. */
OPSCHED_C_EXPORT opsched_status opsched_bias_grad(opsched_runtime* runtime, const opsched_tensor* dy,
                                                  const opsched_tensor* db, int32_t layout,
                                                  void* stream);

enum { OPSCHED_MATH_FP32 = 0, OPSCHED_MATH_TF32 = 1 };
enum {
  OPSCHED_ACT_IDENTITY = 0,
  OPSCHED_ACT_RELU = 1,
  OPSCHED_ACT_SIGMOID = 2,
  OPSCHED_ACT_TANH = 3
};
typedef struct {
  size_t struct_size;
  int64_t stride[2];    /* height, width */
  int64_t pad[2];
  int64_t dilation[2];
  int64_t groups;
  int32_t layout;       /* OPSCHED_NCHW or OPSCHED_NHWC */
  int32_t math;         /* OPSCHED_MATH_FP32 or OPSCHED_MATH_TF32 */
} opsched_conv2d_params;
/* Stride 1, no padding, dilation 1, one group, NCHW, FP32. */
OPSCHED_C_EXPORT void opsched_conv2d_params_init(opsched_conv2d_params* params);

/* y = conv2d(x, w). NCHW: x [N,C,H,W], w [K,C/groups,R,S], y [N,K,P,Q]; NHWC: x [N,H,W,C],
 * w [K,R,S,C/groups], y [N,P,Q,K]. */
OPSCHED_C_EXPORT opsched_status opsched_conv2d(opsched_runtime* runtime, const opsched_tensor* x,
                                               const opsched_tensor* w, const opsched_tensor* y,
                                               const opsched_conv2d_params* params, void* stream);
/* y = act(conv2d(x, w) + b[k]). */
OPSCHED_C_EXPORT opsched_status opsched_conv2d_bias_act(opsched_runtime* runtime,
                                                        const opsched_tensor* x,
                                                        const opsched_tensor* w,
                                                        const opsched_tensor* b,
                                                        const opsched_tensor* y,
                                                        const opsched_conv2d_params* params,
                                                        int32_t activation, void* stream);
/* dx and dw of y = conv2d(x, w) given dy; db (NULL for none) the bias gradient. */
OPSCHED_C_EXPORT opsched_status opsched_conv2d_backward(
    opsched_runtime* runtime, const opsched_tensor* x, const opsched_tensor* w,
    const opsched_tensor* dy, const opsched_tensor* dx, const opsched_tensor* dw,
    const opsched_tensor* db, const opsched_conv2d_params* params, void* stream);

/* Waits for `stream`, then returns the first data error found on the device by calls
 * made before (OPSCHED_OUT_OF_RANGE for an out-of-range index), once. */
OPSCHED_C_EXPORT opsched_status opsched_synchronize(opsched_runtime* runtime, void* stream);

/* The decision for a workload line ("scatter data=f32[1000,64] ... reduction=add"), its
 * provenance and every candidate considered, as text in *text: free it with
 * opsched_free_string. */
OPSCHED_C_EXPORT opsched_status opsched_explain(const opsched_runtime* runtime, const char* line,
                                                char** text);
OPSCHED_C_EXPORT void opsched_free_string(char* text);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* OPSCHED_C_API_H_ */
