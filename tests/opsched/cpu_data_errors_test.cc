// Data errors on the CPU follow the Runtime's contract (opsched/runtime.h) as on a GPU:
// with DeviceErrors::kDeferred an out-of-range scatter index is returned by
// Synchronize(), not by the call; with kSynchronous by the call. Either way the data is
// untouched, for every element and index type, in place or not, and every CPU
// implementation.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "core/data_error.h"
#include "core/format.h"
#include "core/host_tensor.h"
#include "opsched/runtime.h"
#include "registry/registry.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

struct Case {
  std::string dtype;
  std::string index;
  bool in_place;
};

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* index : {"i32", "i64"}) {
      for (bool in_place : {false, true}) out.push_back({dtype, index, in_place});
    }
  }
  return out;
}

// data [8,5], indices and updates [3,5] along axis 0 (add), one index out of range at
// position [1,2].
struct Tensors {
  explicit Tensors(const Case& c)
      : workload(*Registry::Global().ParseCanonical(fmt::format(
            "scatter data={0}[8,5] indices={1}[3,5] updates={0}[3,5] axis=0 reduction=add", c.dtype,
            c.index))),
        data(workload.tensors()[0].desc),
        indices(workload.tensors()[1].desc),
        updates(workload.tensors()[2].desc),
        out(workload.tensors()[0].desc) {
    for (int64_t i = 0; i < 40; ++i) data.Set(i, i * 0.5);
    for (int64_t i = 0; i < 15; ++i) {
      indices.Set(i, i % 8);
      updates.Set(i, 1);
    }
    indices.Set(1 * 5 + 2, 8);
    out.Fill(0xab);
    before_data.assign(static_cast<const uint8_t*>(data.data()),
                       static_cast<const uint8_t*>(data.data()) + data.storage_bytes());
    before_out.assign(static_cast<const uint8_t*>(out.data()),
                      static_cast<const uint8_t*>(out.data()) + out.storage_bytes());
  }
  std::vector<Tensor> All(bool in_place) {
    return {data.tensor(), indices.tensor(), updates.tensor(), in_place ? data.tensor() : out.tensor()};
  }
  bool Untouched() const {
    return std::memcmp(data.data(), before_data.data(), before_data.size()) == 0 &&
           std::memcmp(out.data(), before_out.data(), before_out.size()) == 0;
  }

  Workload workload;
  HostTensor data, indices, updates, out;
  std::vector<uint8_t> before_data, before_out;
};

const char* kMessage = "index 8 at position [1,2] is out of range [-8,8) of axis 0";

TEST(CpuDataErrorsTest, EveryImplementationLeavesDataUntouched) {
  StatusOr<Stream> stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  int runs = 0;
  for (const Case& c : Cases()) {
    for (const Implementation* impl : Registry::Global().ImplementationsOf("scatter")) {
      if (impl->device_kind() != DeviceKind::kCpu) continue;
      Tensors t(c);
      const std::vector<Tensor> all = t.All(c.in_place);
      for (const Config& config : impl->Space(t.workload, CpuTarget()).Enumerate()) {
        Status s = impl->Run(RunArgs{t.workload, all, config, nullptr, 0, *stream});
        EXPECT_TRUE(IsDataError(s)) << impl->name() << " " << c.dtype << "/" << c.index << ": " << s;
        EXPECT_NE(s.message().find(kMessage), std::string::npos) << s;
        EXPECT_TRUE(t.Untouched()) << impl->name() << " " << config.ToString() << " " << c.dtype << "/"
                                   << c.index << (c.in_place ? " in place" : "");
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 24);
}

TEST(CpuDataErrorsTest, DeferredOnTheCpuAsOnAGpu) {
  StatusOr<Stream> stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  for (DeviceErrors mode : {DeviceErrors::kDeferred, DeviceErrors::kSynchronous}) {
    RuntimeOptions o;
    o.target = CpuTarget();
    o.device_errors = mode;
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create(o);
    ASSERT_TRUE(rt.ok());
    for (const Case& c : Cases()) {
      Tensors t(c);
      const std::vector<Tensor> all = t.All(c.in_place);
      Status call = (*rt)->Scatter(all[0], all[1], all[2], all[3], 0, ScatterReduction::kAdd, *stream);
      Status synced = (*rt)->Synchronize(*stream);
      const Status& reported = mode == DeviceErrors::kDeferred ? synced : call;
      const Status& other = mode == DeviceErrors::kDeferred ? call : synced;
      EXPECT_EQ(reported.code(), StatusCode::kInvalidArgument) << c.dtype << "/" << c.index << ": " << reported;
      EXPECT_NE(reported.message().find(kMessage), std::string::npos) << reported;
      EXPECT_TRUE(other.ok()) << other;
      EXPECT_TRUE(t.Untouched());
      OPSCHED_EXPECT_OK((*rt)->Synchronize(*stream));  // reported once
      OPSCHED_EXPECT_OK((*rt)->TakeDeviceError());
    }
  }
}

// Deferred errors belong to the stream of the call that found them: another stream's
// Synchronize does not see (or consume) them.
TEST(CpuDataErrorsTest, DeferredErrorsAreKeptPerStream) {
  // CPU work runs inline; two wrapped handles stand for two streams of a caller.
  int tag_a = 0, tag_b = 0;
  const Stream a_stream = Stream::Wrap(Device::Cpu(), &tag_a);
  const Stream b_stream = Stream::Wrap(Device::Cpu(), &tag_b);
  const Stream* a = &a_stream;
  const Stream* b = &b_stream;
  RuntimeOptions o;
  o.target = CpuTarget();
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create(o);
  ASSERT_TRUE(rt.ok());
  const Case c = Cases().front();
  Tensors t(c);
  const std::vector<Tensor> all = t.All(c.in_place);
  OPSCHED_ASSERT_OK((*rt)->Scatter(all[0], all[1], all[2], all[3], 0, ScatterReduction::kAdd, *a));
  OPSCHED_EXPECT_OK((*rt)->Synchronize(*b));
  Status on_a = (*rt)->Synchronize(*a);
  EXPECT_NE(on_a.message().find(kMessage), std::string::npos) << on_a;
  OPSCHED_EXPECT_OK((*rt)->Synchronize(*a));  // reported once
  // TakeDeviceError sees any stream's.
  OPSCHED_ASSERT_OK((*rt)->Scatter(all[0], all[1], all[2], all[3], 0, ScatterReduction::kAdd, *b));
  EXPECT_NE((*rt)->TakeDeviceError().message().find(kMessage), std::string::npos);
  OPSCHED_EXPECT_OK((*rt)->Synchronize(*b));
}

}  // namespace
}  // namespace opsched
