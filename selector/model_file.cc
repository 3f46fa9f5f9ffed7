#include "selector/model_file.h"

#include <cstring>

#include "core/atomic_file.h"
#include "core/format.h"
#include "core/read_file.h"
#include "records/log_format.h"

namespace opsched::selector {
namespace {

constexpr char kMagic[8] = {'O', 'P', 'S', 'C', 'H', 'E', 'D', 'M'};
constexpr size_t kHeader = 24;

void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t Get(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string SerializeModel(const SelectorModelProto& model) {
  const std::string payload = model.SerializeAsString();
  std::string out(kMagic, sizeof kMagic);
  PutU32(&out, kModelFormatVersion);
  PutU32(&out, records::Crc32(payload));
  PutU64(&out, payload.size());
  return out + payload;
}

StatusOr<SelectorModelProto> ParseModel(std::string_view bytes, std::string_view name) {
  if (bytes.size() >= sizeof kMagic && bytes.size() < kHeader &&
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0) {
    return absl::DataLossError(
        fmt::format("{}: selector model is truncated ({} bytes, its header alone takes {})", name, bytes.size(), kHeader));
  }
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: not an opsched selector model (no OPSCHEDM header)", name));
  }
  const uint32_t version = static_cast<uint32_t>(Get(bytes, 8, 4));
  if (version == 0 || version > kModelFormatVersion) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: selector model format version {}; this build reads versions 1 to {}", name, version, kModelFormatVersion));
  }
  const uint32_t crc = static_cast<uint32_t>(Get(bytes, 12, 4));
  const uint64_t size = Get(bytes, 16, 8);
  if (size != bytes.size() - kHeader) {
    return absl::DataLossError(fmt::format("{}: selector model is truncated or padded ({} payload bytes, header says {})",
                                           name, bytes.size() - kHeader, size));
  }
  const std::string_view payload = bytes.substr(kHeader);
  if (records::Crc32(payload) != crc) {
    return absl::DataLossError(fmt::format("{}: selector model is corrupt (checksum mismatch)", name));
  }
  SelectorModelProto model;
  if (!model.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError(fmt::format("{}: selector model does not parse", name));
  }
  return model;
}

StatusOr<SelectorModelProto> ReadModel(const std::string& path) {
  OPSCHED_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, "selector model"));
  return ParseModel(bytes, path);
}

Status WriteModel(const std::string& path, const SelectorModelProto& model) {
  return Annotate(WriteFileAtomically(path, SerializeModel(model)), "writing the selector model");
}

}  // namespace opsched::selector
