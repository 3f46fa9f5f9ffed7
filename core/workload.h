// Workload: one op invocation signature — op name, named tensor descriptors and typed
// attributes — with its text form, canonical key and stable 64-bit hash.
//
// Text form (one line; see docs/workloads.md):
//   scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] updates=f32[1000,256,7,7] axis=0
// Tensors are `name=dtype[dims]` (strided: `name=dtype[dims]:[strides]`), attributes are
// `key=value` with value an integer, a float, a bool (true/false), a comma-separated
// integer list, a word, or a double-quoted string (blanks allowed, no '"' inside:
// `expr="relu(a + b)"`). `#` starts a comment (outside a quoted string).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/status.h"
#include "core/tensor_desc.h"

namespace opsched {

using AttrValue = std::variant<int64_t, double, bool, std::string, Dims>;

// "int", "float", "bool", "string", "ints".
std::string_view AttrTypeName(const AttrValue& value);
// The value as written in a workload line.
std::string AttrValueToString(const AttrValue& value);

struct TensorArg {
  std::string name;
  TensorDesc desc;
  bool operator==(const TensorArg& o) const { return name == o.name && desc == o.desc; }
};

struct Attr {
  std::string name;
  AttrValue value;
  bool operator==(const Attr& o) const { return name == o.name && value == o.value; }
};

class Workload {
 public:
  Workload() = default;
  explicit Workload(std::string op) : op_(std::move(op)) {}

  const std::string& op() const { return op_; }
  void set_op(std::string_view op) { op_.assign(op.data(), op.size()); }
  const absl::InlinedVector<TensorArg, 4>& tensors() const { return tensors_; }
  absl::InlinedVector<TensorArg, 4>& mutable_tensors() { return tensors_; }
  const absl::InlinedVector<Attr, 8>& attrs() const { return attrs_; }
  absl::InlinedVector<Attr, 8>& mutable_attrs() { return attrs_; }

  // Appends, or replaces the tensor/attribute of the same name in place.
  Workload& SetTensor(std::string_view name, const TensorDesc& desc);
  Workload& SetAttr(std::string_view name, AttrValue value);
  // Removes everything but keeps capacity (reuse without allocating).
  void Clear();

  const TensorDesc* FindTensor(std::string_view name) const;
  const AttrValue* FindAttr(std::string_view name) const;
  // Typed attribute access; an error names the attribute when missing or mistyped.
  StatusOr<int64_t> GetInt(std::string_view name) const;
  StatusOr<double> GetFloat(std::string_view name) const;
  StatusOr<bool> GetBool(std::string_view name) const;
  StatusOr<std::string_view> GetString(std::string_view name) const;
  StatusOr<Dims> GetInts(std::string_view name) const;

  // The text form, in stored order (parse then print gives back a canonical line).
  std::string ToString() const;
  // Stable hash of op, tensors and attributes in stored order. Canonicalised workloads
  // (registry/op_def.h) have one order, so equal invocations hash equal.
  uint64_t hash() const;
  // A fast hash for in-memory tables (abseil's, seeded per process: never persist it).
  uint64_t FastHash() const;
  // A numeric description for learned models and nearest-shape search: per tensor,
  // log2(1 + numel), rank and log2(1 + d) of each dimension (padded to rank 6); then each
  // numeric attribute (ints expanded, bools 0/1) in stored order.
  std::vector<double> Features() const;

  bool operator==(const Workload& o) const {
    return op_ == o.op_ && tensors_ == o.tensors_ && attrs_ == o.attrs_;
  }
  bool operator!=(const Workload& o) const { return !(*this == o); }

 private:
  std::string op_;
  absl::InlinedVector<TensorArg, 4> tensors_;
  absl::InlinedVector<Attr, 8> attrs_;
};

// Parses one workload line. Errors name the 1-based column: "column 17: ...".
// A line holding only a comment or blanks is an error too; suites skip those first.
// Control characters (other than blanks) are errors; tensor sizes are checked against
// TensorDesc's limits.
StatusOr<Workload> ParseWorkload(std::string_view line);

// `text` with every control character written as \xNN (safe to print in a table).
std::string EscapeControlCharacters(std::string_view text);

// True when the line is blank or a comment.
bool IsBlankOrComment(std::string_view line);

}  // namespace opsched
