#include "selector/forest.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/format.h"

namespace opsched {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

Status Malformed(std::string_view what) {
  return absl::DataLossError(fmt::format("the booster's JSON model is malformed: {}", what));
}

StatusOr<const Value*> Field(const Struct& s, const std::string& key) {
  const auto it = s.fields().find(key);
  if (it == s.fields().end()) return Malformed(fmt::format("no '{}'", key));
  return &it->second;
}

StatusOr<const Struct*> Object(const Struct& s, const std::string& key) {
  OPSCHED_ASSIGN_OR_RETURN(const Value* v, Field(s, key));
  if (!v->has_struct_value()) return Malformed(fmt::format("'{}' is not an object", key));
  return &v->struct_value();
}

StatusOr<const ListValue*> List(const Struct& s, const std::string& key) {
  OPSCHED_ASSIGN_OR_RETURN(const Value* v, Field(s, key));
  if (!v->has_list_value()) return Malformed(fmt::format("'{}' is not an array", key));
  return &v->list_value();
}

// XGBoost writes its parameters as strings ("5E-1", "0").
StatusOr<std::string> Param(const Struct& s, const std::string& key) {
  OPSCHED_ASSIGN_OR_RETURN(const Value* v, Field(s, key));
  if (!v->has_string_value()) return Malformed(fmt::format("'{}' is not a string", key));
  return v->string_value();
}

// One tree's node arrays, as XGBoost lays them out.
struct TreeArrays {
  const ListValue* left;
  const ListValue* right;
  const ListValue* feature;
  const ListValue* value;
  const ListValue* default_left;
  const ListValue* split_type;
};

StatusOr<TreeArrays> ArraysOf(const Struct& tree) {
  TreeArrays a;
  OPSCHED_ASSIGN_OR_RETURN(a.left, List(tree, "left_children"));
  OPSCHED_ASSIGN_OR_RETURN(a.right, List(tree, "right_children"));
  OPSCHED_ASSIGN_OR_RETURN(a.feature, List(tree, "split_indices"));
  OPSCHED_ASSIGN_OR_RETURN(a.value, List(tree, "split_conditions"));
  OPSCHED_ASSIGN_OR_RETURN(a.default_left, List(tree, "default_left"));
  OPSCHED_ASSIGN_OR_RETURN(a.split_type, List(tree, "split_type"));
  const int n = a.left->values_size();
  if (n == 0 || a.right->values_size() != n || a.feature->values_size() != n || a.value->values_size() != n ||
      a.default_left->values_size() != n || a.split_type->values_size() != n) {
    return Malformed("a tree's node arrays differ in length");
  }
  return a;
}

}  // namespace

StatusOr<Forest> Forest::FromXgboostJson(std::string_view json) {
  Struct root;
  google::protobuf::util::JsonParseOptions options;
  if (!google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(json.data(), json.size()), &root,
                                                   options)
           .ok()) {
    return Malformed("not JSON");
  }
  OPSCHED_ASSIGN_OR_RETURN(const Struct* learner, Object(root, "learner"));
  OPSCHED_ASSIGN_OR_RETURN(const Struct* param, Object(*learner, "learner_model_param"));
  OPSCHED_ASSIGN_OR_RETURN(const std::string base, Param(*param, "base_score"));
  OPSCHED_ASSIGN_OR_RETURN(const std::string classes, Param(*param, "num_class"));
  if (classes != "0") return absl::UnimplementedError("a booster with several classes");
  if (const auto targets = Param(*param, "num_target"); targets.ok() && *targets != "1") {
    return absl::UnimplementedError("a booster with several targets");
  }
  OPSCHED_ASSIGN_OR_RETURN(const Struct* objective, Object(*learner, "objective"));
  OPSCHED_ASSIGN_OR_RETURN(const std::string objective_name, Param(*objective, "name"));
  // The prediction is the raw sum only where the objective's transform is the identity.
  if (objective_name != "reg:squarederror" && objective_name != "reg:linear") {
    return absl::UnimplementedError(fmt::format("the objective {}", objective_name));
  }
  OPSCHED_ASSIGN_OR_RETURN(const Struct* gbm, Object(*learner, "gradient_booster"));
  OPSCHED_ASSIGN_OR_RETURN(const std::string gbm_name, Param(*gbm, "name"));
  if (gbm_name != "gbtree") return absl::UnimplementedError(fmt::format("the booster {}", gbm_name));
  OPSCHED_ASSIGN_OR_RETURN(const Struct* model, Object(*gbm, "model"));
  OPSCHED_ASSIGN_OR_RETURN(const Struct* model_param, Object(*model, "gbtree_model_param"));
  OPSCHED_ASSIGN_OR_RETURN(const std::string parallel, Param(*model_param, "num_parallel_tree"));
  OPSCHED_ASSIGN_OR_RETURN(const std::string leaf_vector, Param(*model_param, "size_leaf_vector"));
  if (parallel != "1" || leaf_vector != "0") return absl::UnimplementedError("a forest per round or vector leaves");
  OPSCHED_ASSIGN_OR_RETURN(const ListValue* trees, List(*model, "trees"));

  Forest f;
  char* end = nullptr;
  f.base_score_ = std::strtof(base.c_str(), &end);
  if (end == base.c_str() || *end != '\0') return Malformed(fmt::format("base_score '{}'", base));
  for (const Value& t : trees->values()) {
    if (!t.has_struct_value()) return Malformed("a tree is not an object");
    OPSCHED_ASSIGN_OR_RETURN(const TreeArrays a, ArraysOf(t.struct_value()));
    const int n = a.left->values_size();
    auto index = [&](const ListValue* list, int i) { return list->values(i).number_value(); };
    // Breadth first from the root, each split's children placed side by side.
    std::vector<int> order = {0};  // XGBoost node of each placed node
    std::vector<char> placed(n, 0);
    placed[0] = 1;
    const size_t first = f.nodes_.size();
    f.roots_.push_back(static_cast<int32_t>(first));
    f.nodes_.push_back(Node{});
    for (size_t k = 0; k < order.size(); ++k) {
      const int i = order[k];
      const double left = index(a.left, i), right = index(a.right, i);
      Node& node = f.nodes_[first + k];
      node.value = static_cast<float>(index(a.value, i));
      if (left == -1 && right == -1) {
        node.feature = 0;
        node.left = 0;
        continue;
      }
      if (index(a.split_type, i) != 0) return absl::UnimplementedError("categorical splits");
      const double feature = index(a.feature, i);
      if (!(left >= 0 && left < n && right >= 0 && right < n) || left == right || left != std::floor(left) ||
          right != std::floor(right) || placed[static_cast<int>(left)] || placed[static_cast<int>(right)] ||
          !(feature >= 0 && feature <= kColumn) || feature != std::floor(feature)) {
        return Malformed("a tree's children or split feature are out of range, or a node is reached twice");
      }
      const uint32_t column = static_cast<uint32_t>(feature);
      f.max_feature_ = std::max(f.max_feature_, column + 1);
      node.feature = column | kSplit | (index(a.default_left, i) != 0 ? kDefaultLeft : 0u);
      node.left = static_cast<int32_t>(first + order.size());
      for (const double child : {left, right}) {
        placed[static_cast<int>(child)] = 1;
        order.push_back(static_cast<int>(child));
        f.nodes_.push_back(Node{});
      }
    }
  }
  if (f.roots_.empty()) return Malformed("no trees");
  return f;
}

StatusOr<Forest> Forest::FromProto(const selector::ForestProto& proto) {
  const int n = proto.values_size();
  if (proto.features_size() != n || proto.lefts_size() != n) {
    return absl::DataLossError("the forest's node arrays differ in length");
  }
  if (proto.roots_size() == 0) return absl::DataLossError("the forest has no tree");
  Forest f;
  f.base_score_ = proto.base_score();
  for (const int32_t root : proto.roots()) {
    if (root < 0 || root >= n) return absl::DataLossError(fmt::format("a tree's root {} is not a node", root));
    f.roots_.push_back(root);
  }
  f.nodes_.resize(n);
  for (int i = 0; i < n; ++i) {
    Node& node = f.nodes_[i];
    node.value = proto.values(i);
    node.feature = proto.features(i);
    node.left = proto.lefts(i);
    if ((node.feature & kSplit) == 0) continue;
    // Children after their split: every walk ends.
    if (node.left <= i || node.left >= n - 1) {
      return absl::DataLossError(
          fmt::format("node {}'s children ({}) are not after it within the forest", i, node.left));
    }
    f.max_feature_ = std::max(f.max_feature_, (node.feature & kColumn) + 1);
  }
  return f;
}

selector::ForestProto Forest::ToProto() const {
  selector::ForestProto p;
  p.set_base_score(base_score_);
  p.mutable_roots()->Add(roots_.begin(), roots_.end());
  for (const Node& node : nodes_) {
    p.add_values(node.value);
    p.add_features(node.feature);
    p.add_lefts(node.left);
  }
  return p;
}

Status Forest::Predict(const float* x, size_t rows, size_t columns, float* out) const {
  if (columns < max_feature_) {
    return absl::FailedPreconditionError(
        fmt::format("the forest splits on feature {}, the rows have {} columns", max_feature_ - 1, columns));
  }
  // Rows go down each tree a block at a time, side by side: their walks are independent
  // chains of loads that the core overlaps, and the tree's upper levels stay in cache
  // across the block. (Walking every row a tree's full depth without branches, a leaf
  // being its own child, was slower: the trees are far from balanced.)
  constexpr size_t kBlock = 16;
  const Node* nodes = nodes_.data();
  for (size_t r0 = 0; r0 < rows; r0 += kBlock) {
    const size_t block = std::min(kBlock, rows - r0);
    float sum[kBlock];
    const Node* at[kBlock];
    for (size_t r = 0; r < block; ++r) sum[r] = base_score_;
    for (const int32_t root : roots_) {
      for (size_t r = 0; r < block; ++r) at[r] = nodes + root;
      for (bool walking = true; walking;) {
        walking = false;
        for (size_t r = 0; r < block; ++r) {
          const Node* n = at[r];
          if ((n->feature & kSplit) == 0) continue;
          const float v = x[(r0 + r) * columns + (n->feature & kColumn)];
          const bool right = std::isnan(v) ? (n->feature & kDefaultLeft) == 0 : !(v < n->value);
          at[r] = nodes + n->left + right;
          walking = true;
        }
      }
      for (size_t r = 0; r < block; ++r) sum[r] += at[r]->value;
    }
    std::copy(sum, sum + block, out + r0);
  }
  return absl::OkStatus();
}

std::vector<float> Forest::ProbeRows(size_t columns, size_t max_rows) const {
  // Each split's threshold, the float just below it, and missing, in its own column; the
  // other columns take thresholds of other splits on them (or are missing), so that the
  // rows walk both ways down many trees.
  std::vector<const Node*> splits;
  std::vector<std::vector<float>> thresholds(columns);
  for (const Node& n : nodes_) {
    const uint32_t column = n.feature & kColumn;
    if ((n.feature & kSplit) == 0 || column >= columns) continue;
    splits.push_back(&n);
    thresholds[column].push_back(n.value);
  }
  std::vector<float> rows(columns, std::nanf(""));  // every feature missing
  const size_t step = std::max<size_t>(1, splits.size() * 3 / std::max<size_t>(max_rows, 1));
  for (size_t s = 0, r = 1; s < splits.size() && r + 3 <= max_rows; s += step, r += 3) {
    const Node& n = *splits[s];
    const uint32_t column = n.feature & kColumn;
    for (const float v : {n.value, std::nextafter(n.value, -INFINITY), std::nanf("")}) {
      for (size_t c = 0; c < columns; ++c) {
        const std::vector<float>& t = thresholds[c];
        rows.push_back(c == column                  ? v
                       : t.empty() || (s + c) % 5 == 0 ? std::nanf("")
                                                       : t[(s * 7 + c * 13 + r) % t.size()]);
      }
    }
  }
  return rows;
}

}  // namespace opsched
