#include "core/data_error.h"

#include "absl/strings/cord.h"

namespace opsched {
namespace {

constexpr char kDataErrorPayload[] = "opsched/data-error";

}  // namespace

Status MarkDataError(Status status) {
  if (!status.ok()) status.SetPayload(kDataErrorPayload, absl::Cord("1"));
  return status;
}

bool IsDataError(const Status& status) {
  return !status.ok() && status.GetPayload(kDataErrorPayload).has_value();
}

}  // namespace opsched
