#include "bench/micro/records_corpus.h"

#include <cstdio>
#include <vector>

#include "core/format.h"

#include "records/convert.h"
#include "records/log_format.h"
#include "records/log_writer.h"

namespace opsched::bench {

std::string CorpusWorkloadLine(int i) {
  const int n = 1 + i % 1000;
  const int c = 1 + (i / 1000) % 64;
  return fmt::format(
      "scatter data=f32[{0},{1},7,7] indices=i64[{0},{1},7,7] updates=f32[{0},{1},7,7] "
      "axis={2} reduction={3}",
      n, c, i % 4, (i / 64000) % 2 ? "add" : "none");
}

StatusOr<int64_t> WriteRecordsCorpus(const std::string& path, int workloads, int configs) {
  std::remove(path.c_str());
  OPSCHED_ASSIGN_OR_RETURN(auto writer, records::LogWriter::Open(path));
  Target target;
  target.kind = DeviceKind::kCuda;
  target.device_name = "NVIDIA H200";
  target.arch = "sm_90";
  target.sm_count = 132;
  target.driver_version = 13000;
  target.runtime_version = 13000;
  const records::TargetProto target_proto = records::ToProto(target);
  int64_t written = 0;
  std::vector<std::string> batch;
  records::Record r;
  for (int i = 0; i < workloads; ++i) {
    OPSCHED_ASSIGN_OR_RETURN(Workload w, ParseWorkload(CorpusWorkloadLine(i)));
    *r.mutable_workload() = records::ToProto(w);
    *r.mutable_target() = target_proto;
    for (int c = 0; c < configs; ++c) {
      Config config;
      config.Set("block", int64_t(32) << (c % 6));
      config.Set("items", int64_t(1) << ((c / 6) % 4));
      config.Set("vector", int64_t(1) << ((c / 24) % 3));
      r.set_format_version(records::kFormatVersion);
      r.set_implementation(c % 3 == 0 ? "scatter_sorted" : "scatter_parallel");
      *r.mutable_config() = records::ToProto(config);
      const double median = 10.0 + (i % 97) + ((c * 7919) % 1000) / 10.0;
      records::StatsProto* s = r.mutable_stats();
      s->set_median_us(median);
      s->set_min_us(median * 0.97);
      s->set_max_us(median * 1.1);
      s->set_mean_us(median * 1.01);
      s->set_stddev_us(median * 0.01);
      s->set_repeats(100);
      s->set_warmups(10);
      r.set_status(c % 50 == 49 ? records::TIMEOUT : records::OK);
      records::ProvenanceProto* p = r.mutable_provenance();
      p->set_search_policy("grid");
      p->set_trial_index(c);
      p->set_session_id("corpus");
      p->set_timestamp_unix_us(1763800000000000 + written);
      p->set_opsched_version("bench");
      batch.push_back(r.SerializeAsString());
      ++written;
    }
    if (batch.size() >= 20000 || i + 1 == workloads) {
      OPSCHED_RETURN_IF_ERROR(writer->AppendPayloads(batch));
      batch.clear();
    }
  }
  return written;
}

}  // namespace opsched::bench
