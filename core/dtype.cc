#include "core/dtype.h"

#include <cmath>

#include "core/format.h"

namespace opsched {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI64:
      return 8;
  }
  return 0;
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
  }
  return "?";
}

StatusOr<DType> ParseDType(std::string_view name) {
  for (DType dtype : kAllDTypes) {
    if (DTypeName(dtype) == name) return dtype;
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown dtype '{}' (expected f32, f16, bf16, i32 or i64)", name));
}

bool IsFloating(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

bool IsInteger(DType dtype) { return dtype == DType::kI32 || dtype == DType::kI64; }

double UnitRoundoff(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return std::ldexp(1.0, -11);
    case DType::kBF16:
      return std::ldexp(1.0, -8);
    case DType::kF32:
      return std::ldexp(1.0, -24);
    default:
      return 0.0;
  }
}

double SmallestNormal(DType dtype) {
  if (IsInteger(dtype)) return 0;
  return dtype == DType::kF16 ? 6.103515625e-05 : 1.1754943508222875e-38;
}

}  // namespace opsched
