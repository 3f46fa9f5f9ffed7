// Device query, buffers, streams and events on a real GPU; skipped without one.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/buffer.h"
#include "core/event.h"
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
