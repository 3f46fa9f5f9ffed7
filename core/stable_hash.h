// StableHasher: 64-bit FNV-1a, the same on every machine and in every process. Used for
// target fingerprints and workload keys, which records persist; std::hash and absl::Hash
// are seeded per process and must never reach a file.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace opsched {

class StableHasher {
 public:
  static constexpr uint64_t kOffset = 0xcbf29ce484222325ull;
  static constexpr uint64_t kPrime = 0x100000001b3ull;

  StableHasher& Bytes(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      state_ ^= p[i];
      state_ *= kPrime;
    }
    return *this;
  }
  // Strings are length-prefixed so ("ab","c") and ("a","bc") differ.
  StableHasher& String(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    return Bytes(s.data(), s.size());
  }
  StableHasher& Int(int64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(uint64_t(v) >> (8 * i));
    return Bytes(b, 8);
  }
  StableHasher& Double(double v) {
    int64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return Int(bits);
  }
  uint64_t value() const { return state_; }

 private:
  uint64_t state_ = kOffset;
};

}  // namespace opsched
