/* A C program against an installed opsched, found by pkg-config (see Makefile): a CPU
 * runtime, a sum over rows and a scatter-add checked against values computed here, and
 * a bad call that must fail with a message. Exits 1 on any mismatch. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <opsched/c_api.h>

static int failures = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "consumer_pkgconfig: FAILED: %s\n", what);
    ++failures;
  }
}

/* got[k] must equal want[k] (to float rounding) for k < n. */
static void expect_near(const float* got, const float* want, int n, const char* what) {
  for (int k = 0; k < n; ++k) {
    if (fabsf(got[k] - want[k]) <= 1e-5f * (1.0f + fabsf(want[k]))) continue;
    fprintf(stderr, "consumer_pkgconfig: FAILED: %s: element %d is %g, computed here %g\n", what, k, got[k], want[k]);
    ++failures;
  }
}

int main(void) {
  expect(opsched_c_api_version() >= OPSCHED_C_API_VERSION,
         "the library is older than the header it was compiled with");

  opsched_runtime_options options;
  opsched_runtime_options_init(&options);
  options.device_type = OPSCHED_CPU;
  options.synchronous_errors = 1; /* each call returns its own data errors */
  opsched_runtime* rt = NULL;
  if (opsched_runtime_create(&options, &rt) != OPSCHED_OK) {
    fprintf(stderr, "consumer_pkgconfig: FAILED: opsched_runtime_create: %s\n", opsched_last_error());
    return 1;
  }

  /* y[i] = sum over j of x[i][j], x is 3 x 4. */
  float x[3][4], y[3] = {-1, -1, -1}, y_want[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      x[i][j] = 0.25f * (float)(i * 4 + j) - 1.0f;
      y_want[i] += x[i][j];
    }
  const int64_t x_shape[2] = {3, 4}, y_shape[1] = {3}, axis = 1;
  const opsched_tensor xt = {x, OPSCHED_F32, 2, x_shape, NULL, OPSCHED_CPU, 0};
  const opsched_tensor yt = {y, OPSCHED_F32, 1, y_shape, NULL, OPSCHED_CPU, 0};
  opsched_status s = opsched_reduce(rt, &xt, &yt, &axis, 1, OPSCHED_REDUCE_SUM, 0, NULL);
  expect(s == OPSCHED_OK, "opsched_reduce returned an error");
  if (s != OPSCHED_OK) fprintf(stderr, "  %s\n", opsched_last_error());
  expect_near(y, y_want, 3, "reduce sum over rows");

  /* out = data, then out[indices[p]] += updates[p], duplicate indices included. */
  float data[5] = {1, 2, 3, 4, 5}, out[5], out_want[5];
  int64_t indices[6] = {0, 4, 4, 2, 0, 4};
  float updates[6] = {0.5f, 1, 2, -3, 10, 0.25f};
  memcpy(out_want, data, sizeof data);
  for (int p = 0; p < 6; ++p) out_want[indices[p]] += updates[p];
  for (int k = 0; k < 5; ++k) out[k] = -99;
  const int64_t data_shape[1] = {5}, index_shape[1] = {6};
  const opsched_tensor dt = {data, OPSCHED_F32, 1, data_shape, NULL, OPSCHED_CPU, 0};
  const opsched_tensor it = {indices, OPSCHED_I64, 1, index_shape, NULL, OPSCHED_CPU, 0};
  const opsched_tensor ut = {updates, OPSCHED_F32, 1, index_shape, NULL, OPSCHED_CPU, 0};
  const opsched_tensor ot = {out, OPSCHED_F32, 1, data_shape, NULL, OPSCHED_CPU, 0};
  s = opsched_scatter(rt, &dt, &it, &ut, &ot, 0, OPSCHED_SCATTER_ADD, NULL);
  expect(s == OPSCHED_OK, "opsched_scatter returned an error");
  if (s != OPSCHED_OK) fprintf(stderr, "  %s\n", opsched_last_error());
  expect_near(out, out_want, 5, "scatter add");

  /* An index out of [-5, 5) is refused with a message, and out is left as it was. */
  indices[3] = 5;
  float out_before[5];
  memcpy(out_before, out, sizeof out);
  s = opsched_scatter(rt, &dt, &it, &ut, &ot, 0, OPSCHED_SCATTER_ADD, NULL);
  expect(s == OPSCHED_OUT_OF_RANGE, "scatter with index 5 into 5 elements did not return OPSCHED_OUT_OF_RANGE");
  char index_error[512];
  snprintf(index_error, sizeof index_error, "%s", opsched_last_error());
  expect(strstr(index_error, "out of range") != NULL, "opsched_last_error() does not say the index is out of range");
  expect(memcmp(out, out_before, sizeof out) == 0, "a refused scatter wrote into out");

  /* A null tensor is an invalid argument. */
  s = opsched_reduce(rt, NULL, &yt, &axis, 1, OPSCHED_REDUCE_SUM, 0, NULL);
  expect(s == OPSCHED_INVALID_ARGUMENT, "reduce of a null tensor did not return OPSCHED_INVALID_ARGUMENT");
  expect(strstr(opsched_last_error(), "null") != NULL, "opsched_last_error() does not name the null tensor");

  opsched_runtime_destroy(rt);
  if (failures > 0) {
    fprintf(stderr, "consumer_pkgconfig: %d check(s) failed\n", failures);
    return 1;
  }
  printf("consumer_pkgconfig: C API %d, reduce sum and scatter add match; bad index refused (%s)\n",
         (int)opsched_c_api_version(), index_error);
  return 0;
}
