// Conversions between opsched's types and their record protos.
#pragma once

#include <string_view>

#include "core/config.h"
#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/records.pb.h"

namespace opsched::records {

// Fills key (the workload line) and hash besides the structure.
WorkloadProto ToProto(const Workload& workload);
StatusOr<Workload> FromProto(const WorkloadProto& proto);

TargetProto ToProto(const Target& target);
StatusOr<Target> FromProto(const TargetProto& proto);

ConfigProto ToProto(const Config& config);
StatusOr<Config> FromProto(const ConfigProto& proto);
// Stable hash of a config proto, equal to FromProto(proto)->hash().
uint64_t ConfigHash(const ConfigProto& proto);

// "ok", "not_applicable", "launch_error", "wrong_result", "timeout", "out_of_memory",
// "crashed".
std::string_view StatusName(RecordStatus status);

}  // namespace opsched::records
