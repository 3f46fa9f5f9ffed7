// The opsched consumer API: include this, link //:opsched.
//
//   auto runtime = opsched::Runtime::Create({.record_files = {"tuned.log"}});
//   runtime.value()->Scatter(data, indices, updates, out, /*axis=*/0,
//                            opsched::ScatterReduction::kAdd, stream);
//
// See docs/consumer-guide.md.
#pragma once

#include "core/buffer.h"
#include "core/event.h"
#include "core/status.h"
#include "core/stream.h"
#include "core/target.h"
#include "core/tensor.h"
#include "core/workload.h"
#include "opsched/runtime.h"
#include "opsched/workspace.h"
