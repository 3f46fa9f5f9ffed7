// Test helpers: Status assertions, and GPU tests that skip, saying why, without a device.
#pragma once

#include <gtest/gtest.h>

#include "core/gpu/gpu_backend.h"

// Skips the current test unless a GPU is present; the skip message says why none is.
#define OPSCHED_REQUIRE_GPU()                                                   \
  do {                                                                          \
    if (::opsched::gpu::DeviceCount() == 0) {                                   \
      GTEST_SKIP() << "no GPU, test skipped: " << ::opsched::gpu::NoDeviceReason(); \
    }                                                                           \
  } while (0)

#define OPSCHED_ASSERT_OK(expr)                       \
  do {                                                \
    const ::opsched::Status s_ = (expr);              \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.ToString(); \
  } while (0)

#define OPSCHED_EXPECT_OK(expr)                       \
  do {                                                \
    const ::opsched::Status s_ = (expr);              \
    EXPECT_TRUE(s_.ok()) << #expr << ": " << s_.ToString(); \
  } while (0)
