#include "records/log_format.h"

#include <zlib.h>

namespace opsched::records {

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; payloads are capped far below 4 GiB, but stay general.
  while (!bytes.empty()) {
    uInt n = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), n);
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

std::string EncodeHeader(uint32_t version) {
  std::string h(kHeaderSize, '\0');
  std::memcpy(h.data(), kLogMagic, sizeof kLogMagic);
  PutU32(h.data() + 8, version);
  PutU32(h.data() + 12, Crc32(std::string_view(h.data(), 12)));
  return h;
}

std::string EncodeFrame(std::string_view payload) {
  std::string f(kFrameHeaderSize + payload.size(), '\0');
  PutU32(f.data(), kFrameMarker);
  PutU32(f.data() + 4, static_cast<uint32_t>(payload.size()));
  PutU32(f.data() + 8, Crc32(payload));
  PutU32(f.data() + 12, Crc32(std::string_view(f.data(), 12)));
  std::memcpy(f.data() + kFrameHeaderSize, payload.data(), payload.size());
  return f;
}

}  // namespace opsched::records
