// The records log on disk (docs/records.md):
//
//   header  "OPSCHEDL" | u32 format version | u32 crc32 of the 12 bytes before
//   frame   u32 0x5245434F ("OCER") | u32 payload length | u32 crc32(payload)
//           | u32 crc32 of the 12 bytes before | payload (a serialized Record)
//
// All integers little-endian. A frame is written with one append, so concurrent
// writers never interleave; a reader that meets a torn or corrupted frame skips to the
// next frame marker whose header and payload checksums hold.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace opsched::records {

inline constexpr char kLogMagic[8] = {'O', 'P', 'S', 'C', 'H', 'E', 'D', 'L'};
inline constexpr uint32_t kFormatVersion = 1;  // the newest version this build reads and writes
inline constexpr size_t kHeaderSize = 16;
inline constexpr uint32_t kFrameMarker = 0x5245434F;
inline constexpr size_t kFrameHeaderSize = 16;
inline constexpr uint32_t kMaxPayloadBytes = 64u << 20;  // larger lengths are corruption

uint32_t Crc32(std::string_view bytes);

inline void PutU32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

inline uint32_t GetU32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

// The 16-byte file header for `version`.
std::string EncodeHeader(uint32_t version = kFormatVersion);
// A whole frame (header and payload) ready for one write.
std::string EncodeFrame(std::string_view payload);

}  // namespace opsched::records
