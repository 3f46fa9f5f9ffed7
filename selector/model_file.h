// The selector's model file: a 24-byte header — "OPSCHEDM", u32 format version, u32
// CRC-32 of the payload, u64 payload length — then the serialized SelectorModelProto.
// Written atomically (a temporary file renamed over the target). Reading refuses, with a
// message naming the file and what is wrong, anything that is not such a file, a newer
// version, a truncated or corrupted payload.
#pragma once

#include <string>

#include "core/status.h"
#include "selector/selector_model.pb.h"

namespace opsched::selector {

// 2: the boosters' trees alone (XGBoost's model optional); 1 read as before.
inline constexpr uint32_t kModelFormatVersion = 2;

Status WriteModel(const std::string& path, const SelectorModelProto& model);
StatusOr<SelectorModelProto> ReadModel(const std::string& path);
// The same for bytes in memory (tests, fuzzing).
StatusOr<SelectorModelProto> ParseModel(std::string_view bytes, std::string_view name);
std::string SerializeModel(const SelectorModelProto& model);

}  // namespace opsched::selector
