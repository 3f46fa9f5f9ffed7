// A C++ program against an installed opsched, found by CMake (see CMakeLists.txt): a CPU
// runtime, a sum over columns and a scatter-add checked against values computed here, and
// a bad call that must fail with a message. Exits 1 on any mismatch.
#include <opsched/c_api.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;

void Expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "consumer_cmake: FAILED: %s\n", what.c_str());
  ++failures;
}

// An opsched call that must succeed; its message is printed when it does not.
void ExpectOk(opsched_status s, const char* call) {
  Expect(s == OPSCHED_OK, std::string(call) + " returned " + std::to_string(s) + ": " + opsched_last_error());
}

bool Near(float got, float want) { return std::fabs(got - want) <= 1e-5f * (1.0f + std::fabs(want)); }

opsched_tensor F32(std::vector<float>& v, const std::vector<int64_t>& shape) {
  return {v.data(), OPSCHED_F32, static_cast<int32_t>(shape.size()), shape.data(), nullptr, OPSCHED_CPU, 0};
}

}  // namespace

int main() {
  opsched_runtime_options options;
  opsched_runtime_options_init(&options);
  options.device_type = OPSCHED_CPU;
  options.synchronous_errors = 1;  // each call returns its own data errors
  opsched_runtime* rt = nullptr;
  if (opsched_runtime_create(&options, &rt) != OPSCHED_OK) {
    std::fprintf(stderr, "consumer_cmake: FAILED: opsched_runtime_create: %s\n", opsched_last_error());
    return 1;
  }

  // y[j] = sum over i of x[i][j], x is 5 x 3.
  const std::vector<int64_t> x_shape = {5, 3}, y_shape = {3};
  std::vector<float> x(15), y(3, -1.0f), y_want(3, 0.0f);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) {
      x[i * 3 + j] = 1.5f * static_cast<float>(i) - static_cast<float>(j * j);
      y_want[j] += x[i * 3 + j];
    }
  const opsched_tensor xt = F32(x, x_shape), yt = F32(y, y_shape);
  const int64_t axis = 0;
  ExpectOk(opsched_reduce(rt, &xt, &yt, &axis, 1, OPSCHED_REDUCE_SUM, 0, nullptr), "opsched_reduce");
  for (int j = 0; j < 3; ++j)
    Expect(Near(y[j], y_want[j]), "reduce: column " + std::to_string(j) + " sums to " + std::to_string(y[j]) +
                                      ", computed here " + std::to_string(y_want[j]));

  // data = data, then data[indices[p]][j] += updates[p][j], in place, duplicates included.
  const std::vector<int64_t> data_shape = {4, 2}, index_shape = {5, 2};
  std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int64_t> indices = {3, 0, 3, 3, 1, 0, 0, 0, 2, 3};
  std::vector<float> updates = {10, 20, 30, 40, -1, -2, 0.5f, 0.25f, 100, 200};
  std::vector<float> want = data;
  for (int p = 0; p < 5; ++p)
    for (int j = 0; j < 2; ++j) want[indices[p * 2 + j] * 2 + j] += updates[p * 2 + j];
  const opsched_tensor dt = F32(data, data_shape), ut = F32(updates, index_shape);
  const opsched_tensor it = {indices.data(), OPSCHED_I64, 2, index_shape.data(), nullptr, OPSCHED_CPU, 0};
  ExpectOk(opsched_scatter(rt, &dt, &it, &ut, &dt, 0, OPSCHED_SCATTER_ADD, nullptr), "opsched_scatter");
  for (size_t k = 0; k < want.size(); ++k)
    Expect(Near(data[k], want[k]), "scatter: element " + std::to_string(k) + " is " + std::to_string(data[k]) +
                                       ", computed here " + std::to_string(want[k]));

  // An index out of [-4, 4) is refused with a message, and data is left as it was.
  indices[7] = -5;
  const std::vector<float> before = data;
  const opsched_status s = opsched_scatter(rt, &dt, &it, &ut, &dt, 0, OPSCHED_SCATTER_ADD, nullptr);
  const std::string index_error = opsched_last_error();
  Expect(s == OPSCHED_OUT_OF_RANGE, "scatter with index -5 returned " + std::to_string(s) + ", not OPSCHED_OUT_OF_RANGE");
  Expect(index_error.find("out of range") != std::string::npos,
         "opsched_last_error() does not say the index is out of range: '" + index_error + "'");
  Expect(data == before, "a refused scatter wrote into data");

  // A null tensor is an invalid argument.
  Expect(opsched_scatter(rt, &dt, &it, nullptr, &dt, 0, OPSCHED_SCATTER_ADD, nullptr) == OPSCHED_INVALID_ARGUMENT,
         "scatter with null updates did not return OPSCHED_INVALID_ARGUMENT");
  Expect(std::string(opsched_last_error()).find("updates is null") != std::string::npos,
         std::string("opsched_last_error() does not name the null updates: '") + opsched_last_error() + "'");

  opsched_runtime_destroy(rt);
  if (failures > 0) {
    std::fprintf(stderr, "consumer_cmake: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("consumer_cmake: C API %d, reduce sum and in-place scatter add match; bad index refused (%s)\n",
              static_cast<int>(opsched_c_api_version()), index_error.c_str());
  return 0;
}
