// Builds records for tests.
#pragma once

#include <string>

#include "core/config.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/convert.h"
#include "records/log_format.h"
#include "records/records.pb.h"

namespace opsched::records::testing {

inline Target TestGpu(std::string name = "NVIDIA H200", std::string arch = "sm_90",
                      int cudnn = 91300) {
  Target t;
  t.kind = DeviceKind::kCuda;
  t.device_name = std::move(name);
  t.arch = std::move(arch);
  t.sm_count = 132;
  t.driver_version = 13000;
  t.runtime_version = 13000;
  t.cublas_version = 130100;
  t.cudnn_version = cudnn;
  return t;
}

inline Record MakeRecord(const std::string& workload_line, const Target& target,
                         const std::string& implementation, const std::string& config,
                         double median_us, RecordStatus status = OK) {
  Record r;
  r.set_format_version(kFormatVersion);
  *r.mutable_workload() = ToProto(*ParseWorkload(workload_line));
  *r.mutable_target() = ToProto(target);
  r.set_implementation(implementation);
  *r.mutable_config() = ToProto(*ParseConfig(config));
  StatsProto* s = r.mutable_stats();
  s->set_median_us(median_us);
  s->set_min_us(median_us * 0.95);
  s->set_max_us(median_us * 1.2);
  s->set_mean_us(median_us * 1.01);
  s->set_stddev_us(median_us * 0.02);
  s->set_repeats(50);
  s->set_warmups(5);
  r.set_status(status);
  ProvenanceProto* p = r.mutable_provenance();
  p->set_search_policy("grid");
  p->set_session_id("test");
  p->set_timestamp_unix_us(1700000000000000);
  p->set_opsched_version("test");
  return r;
}

}  // namespace opsched::records::testing
