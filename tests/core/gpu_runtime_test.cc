// Device query, buffers, streams and events on a real GPU; skipped without one.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/buffer.h"
#include "core/event.h"
#include "core/half.h"
#include "core/gpu/gpu_backend.h"
#include "core/stream.h"
#include "core/target.h"
#include "tests/test_kernels.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

Device FirstGpu() { return Device{gpu::BackendKind(), 0}; }

TEST(GpuRuntimeTest, DeviceQueryDescribesTheGpu) {
  OPSCHED_REQUIRE_GPU();
  StatusOr<Target> t = QueryTarget(FirstGpu());
  ASSERT_TRUE(t.ok()) << t.status();
  std::printf("target: %s (fingerprint %016llx)\n", t->ToString().c_str(),
              static_cast<unsigned long long>(t->fingerprint()));
  EXPECT_FALSE(t->device_name.empty());
  EXPECT_EQ(t->arch.rfind("sm_", 0), 0u);
  EXPECT_GT(t->sm_count, 0);
  EXPECT_GT(t->memory_bytes, int64_t(1) << 30);
  EXPECT_GT(t->l2_bytes, 0);
  EXPECT_GT(t->driver_version, 0);
  EXPECT_GT(t->runtime_version, 0);
  EXPECT_EQ(t->fingerprint(), QueryTarget(FirstGpu())->fingerprint());
  EXPECT_EQ(DefaultTarget().kind, gpu::BackendKind());
  EXPECT_FALSE(QueryTarget(Device{gpu::BackendKind(), 4096}).ok());
}

TEST(GpuRuntimeTest, BufferRoundTripThroughAKernel) {
  OPSCHED_REQUIRE_GPU();
  const int64_t n = (1 << 20) + 7;
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), -3.0f);
  StatusOr<Buffer> buffer = Buffer::Allocate(FirstGpu(), n * sizeof(float));
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  OPSCHED_ASSERT_OK(buffer->CopyFromHost(host.data(), n * sizeof(float)));
  StatusOr<Stream> stream = Stream::Create(FirstGpu());
  ASSERT_TRUE(stream.ok()) << stream.status();
  OPSCHED_ASSERT_OK(testing::LaunchTwiceOnePlus(*stream, static_cast<float*>(buffer->data()), n));
  OPSCHED_ASSERT_OK(stream->Synchronize());
  std::vector<float> back(n, -1.0f);
  OPSCHED_ASSERT_OK(buffer->CopyToHost(back.data(), n * sizeof(float)));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(back[i], host[i] * 2 + 1) << i;
  // Copies past the end are refused without touching memory.
  EXPECT_EQ(buffer->CopyToHost(back.data(), 8, n * sizeof(float) - 4).code(),
            StatusCode::kOutOfRange);
}

// The device converts f16/bf16 with hardware instructions, the host with bit
// manipulation (core/half.h): both must round alike. Every f16 bit pattern back to float,
// and floats around every rounding boundary (halfway cases, subnormals, overflow, zeros,
// infinities) to f16 and bf16, bit for bit except a NaN's payload.
TEST(GpuRuntimeTest, DeviceHalfConversionsMatchTheHost) {
  OPSCHED_REQUIRE_GPU();
  std::vector<float> x;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float v = HalfToFloat(static_cast<uint16_t>(h));
    const uint32_t u = FloatBits(v);
    // The value, its neighbours, and the midpoints towards the next f16 and bf16 values.
    for (uint32_t d : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x7fffu, 0x8000u, 0x8001u}) {
      x.push_back(BitsFloat(u + d));
      x.push_back(BitsFloat(u - d));
    }
  }
  for (float v : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e30f, -1e30f, 5.9604645e-8f, 2.9802322e-8f,
                  2.9802326e-8f, 1e-40f, 3.3895314e38f, 3.4028235e38f}) {
    x.push_back(v);
  }
  x.push_back(BitsFloat(0x7f800000u));
  x.push_back(BitsFloat(0xff800000u));
  x.push_back(BitsFloat(0x7fc00000u));
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> bits(n);
  for (int64_t i = 0; i < n; ++i) bits[i] = static_cast<uint16_t>(i);
  const Device gpu = FirstGpu();
  auto in = Buffer::Allocate(gpu, n * sizeof(float));
  auto half = Buffer::Allocate(gpu, n * 2), bf16 = Buffer::Allocate(gpu, n * 2), pattern = Buffer::Allocate(gpu, n * 2);
  auto back = Buffer::Allocate(gpu, n * sizeof(float));
  ASSERT_TRUE(in.ok() && half.ok() && bf16.ok() && pattern.ok() && back.ok());
  OPSCHED_ASSERT_OK(in->CopyFromHost(x.data(), n * sizeof(float)));
  OPSCHED_ASSERT_OK(pattern->CopyFromHost(bits.data(), n * 2));
  StatusOr<Stream> stream = Stream::Create(gpu);
  ASSERT_TRUE(stream.ok()) << stream.status();
  OPSCHED_ASSERT_OK(testing::LaunchConversions(*stream, static_cast<const float*>(in->data()),
                                               static_cast<uint16_t*>(half->data()), static_cast<uint16_t*>(bf16->data()),
                                               static_cast<const uint16_t*>(pattern->data()),
                                               static_cast<float*>(back->data()), n));
  OPSCHED_ASSERT_OK(stream->Synchronize());
  std::vector<uint16_t> got_half(n), got_bf16(n);
  std::vector<float> got_back(n);
  OPSCHED_ASSERT_OK(half->CopyToHost(got_half.data(), n * 2));
  OPSCHED_ASSERT_OK(bf16->CopyToHost(got_bf16.data(), n * 2));
  OPSCHED_ASSERT_OK(back->CopyToHost(got_back.data(), n * sizeof(float)));
  auto half_nan = [](uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; };
  auto bf16_nan = [](uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; };
  int64_t bad = 0;
  for (int64_t i = 0; i < n && bad < 10; ++i) {
    const uint16_t want_half = FloatToHalf(x[i]), want_bf16 = FloatToBf16(x[i]);
    if (got_half[i] != want_half && !(half_nan(got_half[i]) && half_nan(want_half))) {
      ADD_FAILURE() << "f16 of " << x[i] << " (bits " << std::hex << FloatBits(x[i]) << "): device " << got_half[i]
                    << ", host " << want_half;
      ++bad;
    }
    if (got_bf16[i] != want_bf16 && !(bf16_nan(got_bf16[i]) && bf16_nan(want_bf16))) {
      ADD_FAILURE() << "bf16 of " << x[i] << " (bits " << std::hex << FloatBits(x[i]) << "): device " << got_bf16[i]
                    << ", host " << want_bf16;
      ++bad;
    }
    const float want_back = HalfToFloat(bits[i]);
    if (FloatBits(got_back[i]) != FloatBits(want_back) && !(got_back[i] != got_back[i] && want_back != want_back)) {
      ADD_FAILURE() << "float of f16 bits " << std::hex << bits[i] << ": device " << got_back[i] << ", host "
                    << want_back;
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(GpuRuntimeTest, EventsTimeWorkOnAStream) {
  OPSCHED_REQUIRE_GPU();
  StatusOr<Stream> stream = Stream::Create(FirstGpu());
  ASSERT_TRUE(stream.ok());
  StatusOr<Event> start = Event::Create(FirstGpu());
  StatusOr<Event> end = Event::Create(FirstGpu());
  ASSERT_TRUE(start.ok() && end.ok());
  OPSCHED_ASSERT_OK(testing::LaunchSpin(*stream, 1000));  // warm up
  OPSCHED_ASSERT_OK(start->Record(*stream));
  OPSCHED_ASSERT_OK(testing::LaunchSpin(*stream, 2'000'000));  // 2 ms
  OPSCHED_ASSERT_OK(end->Record(*stream));
  OPSCHED_ASSERT_OK(end->Synchronize());
  StatusOr<double> ms = Event::ElapsedMs(*start, *end);
  ASSERT_TRUE(ms.ok()) << ms.status();
  std::printf("2 ms spin timed at %.3f ms\n", *ms);
  EXPECT_GE(*ms, 1.95);
  EXPECT_LT(*ms, 10.0);
}

TEST(GpuRuntimeTest, StreamOrderingThroughEvents) {
  OPSCHED_REQUIRE_GPU();
  StatusOr<Stream> a = Stream::Create(FirstGpu());
  StatusOr<Stream> b = Stream::Create(FirstGpu());
  StatusOr<Event> done = Event::Create(FirstGpu());
  StatusOr<Event> t0 = Event::Create(FirstGpu());
  StatusOr<Event> t1 = Event::Create(FirstGpu());
  ASSERT_TRUE(a.ok() && b.ok() && done.ok() && t0.ok() && t1.ok());
  OPSCHED_ASSERT_OK(t0->Record(*b));
  OPSCHED_ASSERT_OK(testing::LaunchSpin(*a, 3'000'000));
  OPSCHED_ASSERT_OK(done->Record(*a));
  OPSCHED_ASSERT_OK(b->WaitFor(*done));
  OPSCHED_ASSERT_OK(t1->Record(*b));
  OPSCHED_ASSERT_OK(b->Synchronize());
  // Stream b's timeline waited for a's 3 ms of work.
  EXPECT_GE(*Event::ElapsedMs(*t0, *t1), 2.9);
}

TEST(GpuRuntimeTest, ErrorsBecomeStatusesNotAborts) {
  OPSCHED_REQUIRE_GPU();
  // 1 PiB cannot be allocated: ResourceExhausted naming the call and size.
  StatusOr<Buffer> huge = Buffer::Allocate(FirstGpu(), size_t(1) << 50);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  const std::string call = std::string(DeviceKindName(gpu::BackendKind())) + "Malloc(";
  EXPECT_NE(huge.status().message().find(call), std::string::npos)
      << huge.status().message();
  // The process and device stay usable afterwards.
  StatusOr<Buffer> small = Buffer::Allocate(FirstGpu(), 256);
  EXPECT_TRUE(small.ok()) << small.status();
  EXPECT_FALSE(gpu::SetDevice(Device{gpu::BackendKind(), 4096}).ok());
}

TEST(GpuRuntimeTest, CpuStreamsAndEventsWorkWithoutAGpu) {
  StatusOr<Stream> s = Stream::Create(Device::Cpu());
  ASSERT_TRUE(s.ok());
  StatusOr<Event> a = Event::Create(Device::Cpu());
  StatusOr<Event> b = Event::Create(Device::Cpu());
  OPSCHED_ASSERT_OK(a->Record(*s));
  OPSCHED_ASSERT_OK(b->Record(*s));
  EXPECT_GE(*Event::ElapsedMs(*a, *b), 0.0);
  StatusOr<Buffer> host = Buffer::Allocate(Device::Cpu(), 100);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host->data()) % 64, 0u);
  int v = 7;
  OPSCHED_ASSERT_OK(host->CopyFromHost(&v, sizeof v, 96));
  int w = 0;
  OPSCHED_ASSERT_OK(host->CopyToHost(&w, sizeof w, 96));
  EXPECT_EQ(w, 7);
  EXPECT_FALSE(host->CopyFromHost(&v, sizeof v, 97).ok());
}

}  // namespace
}  // namespace opsched
