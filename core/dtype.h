// Element types of tensors: f32, f16, bf16, i32, i64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace opsched {

enum class DType : uint8_t { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kI32,
                                       DType::kI64};

// Bytes per element.
size_t DTypeSize(DType dtype);
// Short name used in workload lines: "f32", "f16", "bf16", "i32", "i64".
std::string_view DTypeName(DType dtype);
StatusOr<DType> ParseDType(std::string_view name);
bool IsFloating(DType dtype);
bool IsInteger(DType dtype);
// Unit roundoff of a floating-point dtype (2^-24 for f32, 2^-11 f16, 2^-8 bf16); 0 for
// integers (exact).
double UnitRoundoff(DType dtype);
// Smallest positive normal value of a floating-point dtype (f32 and bf16 share theirs);
// 0 for integers (exact).
double SmallestNormal(DType dtype);

}  // namespace opsched
