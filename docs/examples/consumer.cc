// A complete opsched consumer: scatter-add through the Runtime, on the default target
// (the first GPU, else the CPU), with the decisions of a tuning run's records.
//
//   consumer [RECORDS_LOG]
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "opsched/opsched.h"

using namespace opsched;

// Reports a failed step and leaves main with status 1.
#define CHECK_OK(expr)                                                   \
  do {                                                                   \
    const Status s_ = (expr);                                            \
    if (!s_.ok()) {                                                      \
      std::fprintf(stderr, "%s: %s\n", #expr, s_.ToString().c_str());   \
      return 1;                                                          \
    }                                                                    \
  } while (0)

int main(int argc, char** argv) {
  // 1. A runtime: target, record logs, options. Nothing is compiled at run time.
  RuntimeOptions options;
  if (argc > 1) options.record_files.push_back(argv[1]);
  StatusOr<std::unique_ptr<Runtime>> created = Runtime::Create(options);
  CHECK_OK(created.status());
  Runtime& runtime = **created;
  const Device device = runtime.target().device();
  std::printf("target: %s\n", runtime.target().ToString().c_str());

  // 2. Tensors on the target's device: out = data; out[indices[i][j]][j] += updates[i][j].
  const int64_t rows = 1000, cols = 64, n = 4096;
  const TensorDesc data_desc = TensorDesc::Contiguous(DType::kF32, {rows, cols});
  const TensorDesc index_desc = TensorDesc::Contiguous(DType::kI64, {n, cols});
  const TensorDesc update_desc = TensorDesc::Contiguous(DType::kF32, {n, cols});
  std::vector<float> data(rows * cols), updates(n * cols);
  std::vector<int64_t> indices(n * cols);
  std::mt19937 rng(42);
  for (float& v : data) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (float& v : updates) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (int64_t& v : indices) v = std::uniform_int_distribution<int64_t>(0, rows - 1)(rng);

  StatusOr<Buffer> data_buf = Buffer::Allocate(device, data_desc.bytes());
  StatusOr<Buffer> index_buf = Buffer::Allocate(device, index_desc.bytes());
  StatusOr<Buffer> update_buf = Buffer::Allocate(device, update_desc.bytes());
  StatusOr<Buffer> out_buf = Buffer::Allocate(device, data_desc.bytes());
  CHECK_OK(data_buf.status());
  CHECK_OK(index_buf.status());
  CHECK_OK(update_buf.status());
  CHECK_OK(out_buf.status());
  CHECK_OK(data_buf->CopyFromHost(data.data(), data_desc.bytes()));
  CHECK_OK(index_buf->CopyFromHost(indices.data(), index_desc.bytes()));
  CHECK_OK(update_buf->CopyFromHost(updates.data(), update_desc.bytes()));
  const Tensor data_t = *data_buf->AsTensor(data_desc);
  const Tensor index_t = *index_buf->AsTensor(index_desc);
  const Tensor update_t = *update_buf->AsTensor(update_desc);
  const Tensor out_t = *out_buf->AsTensor(data_desc);

  // 3. A stream. A framework would wrap its own: Stream::Wrap(device, its_cuda_stream).
  StatusOr<Stream> stream = Stream::Create(device);
  CHECK_OK(stream.status());

  // 4. The call: dispatch picks the tuned implementation and queues it on the stream.
  CHECK_OK(runtime.Scatter(data_t, index_t, update_t, out_t, /*axis=*/0, ScatterReduction::kAdd, *stream));
  // 5. Data errors found on the device (an out-of-range index) arrive here.
  CHECK_OK(runtime.Synchronize(*stream));

  // 6. Check against a plain loop on the host.
  std::vector<float> out(rows * cols), expected = data;
  CHECK_OK(out_buf->CopyToHost(out.data(), data_desc.bytes()));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < cols; ++j) expected[indices[i * cols + j] * cols + j] += updates[i * cols + j];
  }
  double worst = 0;
  for (size_t k = 0; k < out.size(); ++k) worst = std::max(worst, double(std::abs(out[k] - expected[k])));
  std::printf("max |out - expected| = %.3g\n", worst);
  if (worst > 1e-3) return 1;

  // 7. Why this implementation?
  StatusOr<Explanation> why = runtime.Explain(
      "scatter data=f32[1000,64] indices=i64[4096,64] updates=f32[4096,64] axis=0 reduction=add");
  CHECK_OK(why.status());
  std::printf("%s", why->ToString().c_str());
  return 0;
}
