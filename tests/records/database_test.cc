#include "records/database.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "core/format.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"

namespace opsched::records {
namespace {

using testing::MakeRecord;
using testing::TestGpu;

const char* kLine = "scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] "
                    "updates=f32[1000,256,7,7] axis=0 reduction=none";

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::remove(path.c_str());
  return path;
}

Workload W(const char* line) { return *ParseWorkload(line); }

TEST(DatabaseTest, BestIsTheFastestOkRecordOfTheExactTarget) {
  Database db;
  const Target h200 = TestGpu();
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_parallel", "block=256", 50)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_parallel", "block=128", 40)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_sorted", "block=128", 10, CRASHED)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_sequential", "-", 45)));
  std::optional<Match> best = db.Best(W(kLine), h200);
  ASSERT_TRUE(best.has_value());
  EXPECT_FALSE(best->transferred);
  EXPECT_EQ(db.implementation(best->entry->implementation), "scatter_parallel");
  EXPECT_EQ(db.config(best->entry->config).ToString(), "block=128");
  EXPECT_FLOAT_EQ(best->entry->median_us, 40);
  EXPECT_FALSE(db.Best(W("scatter data=f32[4] indices=i64[1] updates=f32[1] axis=0 reduction=none"),
                       h200)
                   .has_value());
}

TEST(DatabaseTest, BestIsRankedByCallTimeSoAHostBoundRecordLoses) {
  Database db;
  const Target h200 = TestGpu();
  // Fastest on the device, but each call costs 30 us on the host (a vendor call's
  // overhead, or a call that waits for the device).
  Record host_bound = MakeRecord(kLine, h200, "scatter_parallel", "block=256", 16);
  host_bound.mutable_stats()->set_host_us(30);
  OPSCHED_ASSERT_OK(db.Add(host_bound));
  Record quick_host = MakeRecord(kLine, h200, "scatter_parallel", "block=128", 18);
  quick_host.mutable_stats()->set_host_us(4);
  OPSCHED_ASSERT_OK(db.Add(quick_host));
  std::optional<Match> best = db.Best(W(kLine), h200);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(db.config(best->entry->config).ToString(), "block=128");
  EXPECT_FLOAT_EQ(best->entry->median_us, 18);
  EXPECT_FLOAT_EQ(best->entry->call_us, 18);
  EXPECT_FLOAT_EQ(db.entries()[0].call_us, 30);
  EXPECT_FLOAT_EQ(db.entries()[0].median_us, 16);
}

TEST(DatabaseTest, TransferOnlyWithinTheArchAndOnlyWhenAsked) {
  Database db;
  const Target h200 = TestGpu();
  const Target h200_new_cudnn = TestGpu("NVIDIA H200", "sm_90", 91400);
  const Target h100 = TestGpu("NVIDIA H100 80GB HBM3", "sm_90");
  const Target a100 = TestGpu("NVIDIA A100", "sm_80");
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_parallel", "block=256", 50)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, a100, "scatter_sorted", "block=128", 5)));
  // Same device, new cuDNN: not applied unless transfer is allowed, then marked.
  EXPECT_FALSE(db.Best(W(kLine), h200_new_cudnn).has_value());
  std::optional<Match> t = db.Best(W(kLine), h200_new_cudnn, /*allow_transfer=*/true);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->transferred);
  EXPECT_EQ(db.implementation(t->entry->implementation), "scatter_parallel");
  // Same arch, other device: likewise.
  ASSERT_TRUE(db.Best(W(kLine), h100, true).has_value());
  EXPECT_TRUE(db.Best(W(kLine), h100, true)->transferred);
  // Another arch's (faster) record is never applied, and neither is another kind's.
  Target hip = h200;
  hip.kind = DeviceKind::kHip;
  EXPECT_EQ(db.implementation(db.Best(W(kLine), h100, true)->entry->implementation),
            "scatter_parallel");
  EXPECT_FALSE(db.Best(W(kLine), hip, true).has_value());
  EXPECT_FALSE(db.Best(W(kLine), CpuTarget(), true).has_value());
  // The exact record wins over transfer when present.
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h100, "scatter_sequential", "-", 900)));
  std::optional<Match> exact = db.Best(W(kLine), h100, true);
  EXPECT_FALSE(exact->transferred);
  EXPECT_EQ(db.implementation(exact->entry->implementation), "scatter_sequential");
}

TEST(DatabaseTest, CountsRecordsPerTargetAndSaysWhenNoneIsForThisOne) {
  Database db;
  const Target h200 = TestGpu();
  const Target h100 = TestGpu("NVIDIA H100 80GB HBM3", "sm_90");
  const Target a100 = TestGpu("NVIDIA A100", "sm_80");
  EXPECT_EQ(NoRecordsForTargetNote(db, h100), "");  // nothing loaded: nothing to say
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_parallel", "block=256", 50)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, h200, "scatter_parallel", "block=128", 40, CRASHED)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, a100, "scatter_sorted", "block=128", 5)));
  EXPECT_EQ(db.CountFor(TargetKey::Of(h200)), 2u);
  EXPECT_EQ(db.CountFor(TargetKey::Of(a100)), 1u);
  EXPECT_EQ(db.CountFor(TargetKey::Of(h100)), 0u);
  EXPECT_EQ(db.CountFor(TargetKey::Of(h100), /*allow_transfer=*/true), 2u);  // the H200's, same arch
  EXPECT_EQ(db.CountFor(TargetKey::Of(CpuTarget()), true), 0u);

  EXPECT_EQ(NoRecordsForTargetNote(db, h200), "");
  EXPECT_EQ(NoRecordsForTargetNote(db, h100, /*allow_transfer=*/true), "");
  const std::string note = NoRecordsForTargetNote(db, h100);
  EXPECT_EQ(note.rfind(fmt::format("3 records loaded, none for this target (fingerprint {:016x}, cuda NVIDIA H100 "
                                   "80GB HBM3 sm_90, cuBLAS {}, cuDNN {}); they are for: ",
                                   h100.fingerprint(), h100.cublas_version, h100.cudnn_version),
                       0),
            0u)
      << note;
  EXPECT_NE(note.find(fmt::format("cuda NVIDIA H200 sm_90 (cuBLAS {}, cuDNN {}, fingerprint {:016x}): 2",
                                  h200.cublas_version, h200.cudnn_version, h200.fingerprint())),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("cuda NVIDIA A100 sm_80"), std::string::npos) << note;
  EXPECT_NE(NoRecordsForTargetNote(db, CpuTarget(), true).find("none for this target (fingerprint"), std::string::npos);

  // The same GPU with another cuDNN (PyTorch loads its own) is another target; the note
  // shows the library versions on both sides.
  Database same_gpu;
  Target tuned_from_shell = h100, torch_process = h100;
  tuned_from_shell.cudnn_version = 91400;
  torch_process.cudnn_version = 91900;
  OPSCHED_ASSERT_OK(same_gpu.Add(MakeRecord(kLine, tuned_from_shell, "scatter_parallel", "block=256", 50)));
  const std::string versions = NoRecordsForTargetNote(same_gpu, torch_process);
  EXPECT_NE(versions.find(fmt::format("cuDNN 91900); they are for: cuda NVIDIA H100 80GB HBM3 sm_90 (cuBLAS {}, "
                                      "cuDNN 91400, fingerprint {:016x}): 1",
                                      h100.cublas_version, tuned_from_shell.fingerprint())),
            std::string::npos)
      << versions;
}

// What tells an implementation's vendor libraries apart in these tests: names with
// "cudnn" call cuDNN (and cuBLAS, as cuDNN may), names with "gemm" call cuBLAS.
LibraryUse UseByName(std::string_view name) {
  const bool cudnn = name.find("cudnn") != std::string_view::npos;
  return LibraryUse{.cublas = cudnn || name.find("gemm") != std::string_view::npos, .cudnn = cudnn};
}

TEST(DatabaseTest, RecordsOfOtherLibraryVersionsHoldForImplementationsThatDoNotCallThem) {
  const Target shell = TestGpu("NVIDIA H100 80GB HBM3", "sm_90", 91400);
  Target torch_process = shell;  // the same GPU in a process that loaded PyTorch's cuDNN
  torch_process.cudnn_version = 91900;
  Target other_cublas = shell;
  other_cublas.cublas_version = 130200;
  Target other_driver = torch_process;
  other_driver.driver_version = 13010;
  const char* conv = "conv2d x=f32[8,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 dilation=1,1 groups=1 "
                     "layout=nchw math=fp32";
  auto fill = [&](Database& db, double cudnn_us) {
    OPSCHED_ASSERT_OK(db.Add(MakeRecord(conv, shell, "conv2d_cudnn", "algo=winograd_nonfused", cudnn_us)));
    OPSCHED_ASSERT_OK(db.Add(MakeRecord(conv, shell, "conv2d_cuda_im2col_gemm", "images=8", 35)));
    OPSCHED_ASSERT_OK(db.Add(MakeRecord(conv, shell, "conv2d_cuda_direct", "block=128", 30)));
    OPSCHED_ASSERT_OK(db.Add(MakeRecord(conv, shell, "conv2d_cuda_implicit_gemm", "tile=64", 20, CRASHED)));
  };
  // Without SetLibraryUse a record matches by fingerprint only (the rule before it).
  Database strict;
  fill(strict, 40);
  EXPECT_FALSE(strict.Best(W(conv), torch_process).has_value());
  EXPECT_EQ(strict.CountFor(TargetKey::Of(torch_process)), 0u);
  EXPECT_TRUE(strict.ExactRecordsFor(W(conv).hash(), TargetKey::Of(torch_process)).empty());

  Database db;
  db.SetLibraryUse(UseByName);
  fill(db, 40);
  // Another cuDNN: the cuBLAS GEMM and the own kernel hold, exactly; cuDNN's does not.
  std::optional<Match> best = db.Best(W(conv), torch_process);
  ASSERT_TRUE(best.has_value());
  EXPECT_FALSE(best->transferred);
  EXPECT_EQ(db.implementation(best->entry->implementation), "conv2d_cuda_direct");
  std::vector<std::string> held;
  for (const RecordEntry* e : db.ExactRecordsFor(W(conv).hash(), TargetKey::Of(torch_process))) {
    held.push_back(db.implementation(e->implementation));
  }
  EXPECT_EQ(held, (std::vector<std::string>{"conv2d_cuda_im2col_gemm", "conv2d_cuda_direct"}));
  EXPECT_EQ(db.CountFor(TargetKey::Of(torch_process)), 3u);  // any status, the crashed GEMM's too
  EXPECT_EQ(NoRecordsForTargetNote(db, torch_process), "");
  // Another cuBLAS: only the own kernel holds.
  held.clear();
  for (const RecordEntry* e : db.ExactRecordsFor(W(conv).hash(), TargetKey::Of(other_cublas))) {
    held.push_back(db.implementation(e->implementation));
  }
  EXPECT_EQ(held, (std::vector<std::string>{"conv2d_cuda_direct"}));
  // Another driver is another platform: nothing holds, unless transfer is allowed.
  EXPECT_FALSE(db.Best(W(conv), other_driver).has_value());
  EXPECT_TRUE(db.ExactRecordsFor(W(conv).hash(), TargetKey::Of(other_driver)).empty());
  best = db.Best(W(conv), other_driver, /*allow_transfer=*/true);
  ASSERT_TRUE(best.has_value());
  EXPECT_TRUE(best->transferred);
  // On the target itself every record holds.
  EXPECT_EQ(db.ExactRecordsFor(W(conv).hash(), TargetKey::Of(shell)).size(), 4u);  // any status, as RecordsFor

  // Where cuDNN's algorithm was the fastest with the other cuDNN, the slower own kernels
  // are not known to be the best here: no record holds (the dispatcher goes on to its
  // model and floor), and on the target itself cuDNN's wins.
  Database cudnn_first;
  cudnn_first.SetLibraryUse(UseByName);
  fill(cudnn_first, 25);
  EXPECT_FALSE(cudnn_first.Best(W(conv), torch_process).has_value());
  EXPECT_TRUE(cudnn_first.ExactRecordsFor(W(conv).hash(), TargetKey::Of(torch_process)).empty());
  best = cudnn_first.Best(W(conv), shell);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(cudnn_first.implementation(best->entry->implementation), "conv2d_cudnn");
}

TEST(DatabaseTest, ExactRecordsOfBothVersionsMeetAndTheFastestHoldingOneWins) {
  const Target shell = TestGpu("NVIDIA H100 80GB HBM3", "sm_90", 91400);
  Target torch_process = shell;
  torch_process.cudnn_version = 91900;
  Database db;
  // Records added before SetLibraryUse are covered too.
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, shell, "scatter_cuda_parallel", "block=256", 15)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, torch_process, "scatter_cuda_parallel", "block=128", 35)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, torch_process, "scatter_cudnn_fake", "-", 20)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, shell, "scatter_cudnn_fake", "-", 10)));
  db.SetLibraryUse(UseByName);
  // Here: the own kernel's 35 us and the vendor's 20 us; the shell's own-kernel 15 us is
  // slower than the shell's vendor record (10 us), which does not hold here: not taken.
  std::optional<Match> best = db.Best(W(kLine), torch_process);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(db.implementation(best->entry->implementation), "scatter_cudnn_fake");
  EXPECT_FLOAT_EQ(best->entry->median_us, 20);
  best = db.Best(W(kLine), shell);
  ASSERT_TRUE(best.has_value());
  EXPECT_FLOAT_EQ(best->entry->median_us, 10);
  // Seen from the shell, the torch process's own-kernel record (35 us) is slower than that
  // process's vendor record (20 us, another cuDNN): only the shell's two records count.
  EXPECT_EQ(db.ExactRecordsFor(W(kLine).hash(), TargetKey::Of(shell)).size(), 2u);
  // Nearest finds a neighbour through a record that holds here.
  const char* other = "scatter data=f32[1000,256,7,8] indices=i64[1000,256,7,8] "
                      "updates=f32[1000,256,7,8] axis=0 reduction=none";
  std::vector<Neighbour> near = db.Nearest(W(other), torch_process, 2);
  ASSERT_EQ(near.size(), 1u);
  EXPECT_FALSE(near[0].best.transferred);
  EXPECT_FLOAT_EQ(near[0].best.entry->median_us, 20);
}

TEST(DatabaseTest, NearestStaysInTheFamilyAndOrdersByShapeDistance) {
  Database db;
  const Target gpu = TestGpu();
  auto line = [](int n, const char* axis) {
    return "reduce x=f32[" + std::to_string(n) + ",64] axes=" + axis + " op=sum";
  };
  for (int n : {16, 256, 4096, 65536}) {
    OPSCHED_ASSERT_OK(db.Add(MakeRecord(line(n, "1"), gpu, "reduce_rows", "block=" + std::to_string(n), 1)));
  }
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(line(300, "0"), gpu, "reduce_columns", "block=64", 1)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord("reduce x=f16[300,64] axes=1 op=sum", gpu, "reduce_rows", "block=1", 1)));
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(line(200, "1"), gpu, "reduce_rows", "block=2", 1, TIMEOUT)));
  std::vector<Neighbour> near = db.Nearest(W(line(300, "1").c_str()), gpu, 3);
  ASSERT_EQ(near.size(), 3u);
  EXPECT_EQ(near[0].workload->ToString(), line(256, "1"));
  EXPECT_EQ(near[1].workload->ToString(), line(4096, "1"));
  EXPECT_EQ(near[2].workload->ToString(), line(16, "1"));
  EXPECT_LT(near[0].distance, near[1].distance);
  EXPECT_NEAR(near[0].distance, std::log2(301.0) - std::log2(257.0), 1e-12);
  EXPECT_EQ(db.config(near[0].best.entry->config).ToString(), "block=256");
  // Other targets have no neighbours; a workload never neighbours itself.
  EXPECT_TRUE(db.Nearest(W(line(300, "1").c_str()), TestGpu("NVIDIA A100", "sm_80"), 3).empty());
  for (const Neighbour& n : db.Nearest(W(line(256, "1").c_str()), gpu, 10)) {
    EXPECT_NE(n.workload->ToString(), line(256, "1"));
  }
}

TEST(DatabaseTest, ContainsAndRecordsForSeeEveryStatus) {
  Database db;
  const Target gpu = TestGpu();
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(kLine, gpu, "scatter_sorted", "block=128,items=4", 10, CRASHED)));
  const uint64_t h = W(kLine).hash();
  EXPECT_TRUE(db.Contains(h, gpu.fingerprint(), "scatter_sorted", *ParseConfig("items=4,block=128")));
  EXPECT_FALSE(db.Contains(h, gpu.fingerprint(), "scatter_sorted", *ParseConfig("block=128,items=8")));
  EXPECT_FALSE(db.Contains(h, gpu.fingerprint(), "scatter_parallel", *ParseConfig("block=128,items=4")));
  EXPECT_EQ(db.RecordsFor(h, gpu.fingerprint()).size(), 1u);
  EXPECT_FALSE(db.Best(W(kLine), gpu).has_value());
}

TEST(DatabaseTest, InconsistentRecordsAreSkippedNotMisapplied) {
  const std::string path = TempPath("inconsistent.log");
  const Target gpu = TestGpu();
  Record bad_hash = MakeRecord(kLine, gpu, "scatter_parallel", "block=256", 1);
  bad_hash.mutable_workload()->set_hash(12345);
  Record bad_fp = MakeRecord(kLine, gpu, "scatter_parallel", "block=256", 1);
  bad_fp.mutable_target()->set_fingerprint(999);
  Record good = MakeRecord(kLine, gpu, "scatter_parallel", "block=512", 7);
  {
    auto writer = LogWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    for (const Record& r : {bad_hash, bad_fp, good}) OPSCHED_ASSERT_OK((*writer)->Append(r));
  }
  Database db;
  LogScan scan;
  OPSCHED_ASSERT_OK(db.Load(path, &scan));
  EXPECT_EQ(scan.intact, 3);
  EXPECT_EQ(scan.rejected, 2);  // intact frames, but records that break the rules
  ASSERT_EQ(db.size(), 1u);
  std::optional<Match> best = db.Best(W(kLine), gpu);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(db.config(best->entry->config).ToString(), "block=512");
  // The full record reads back from the log.
  StatusOr<Record> fetched = db.Fetch(*best->entry);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->SerializeAsString(), good.SerializeAsString());
}

TEST(DatabaseTest, LoadsSeveralLogs) {
  const Target gpu = TestGpu();
  const std::string a = TempPath("a.log");
  const std::string b = TempPath("b.log");
  {
    auto wa = LogWriter::Open(a);
    auto wb = LogWriter::Open(b);
    ASSERT_TRUE(wa.ok() && wb.ok());
    OPSCHED_ASSERT_OK((*wa)->Append(MakeRecord(kLine, gpu, "scatter_parallel", "block=256", 9)));
    OPSCHED_ASSERT_OK((*wb)->Append(MakeRecord(kLine, gpu, "scatter_sorted", "block=256", 3)));
  }
  Database db;
  OPSCHED_ASSERT_OK(db.Load(a));
  OPSCHED_ASSERT_OK(db.Load(b));
  EXPECT_EQ(db.size(), 2u);
  EXPECT_EQ(db.implementation(db.Best(W(kLine), gpu)->entry->implementation), "scatter_sorted");
  EXPECT_FALSE(db.Load(TempPath("nope.log")).ok());
}

}  // namespace
}  // namespace opsched::records
