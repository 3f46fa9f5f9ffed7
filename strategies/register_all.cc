#include "strategies/register_all.h"

#include "ops/conv2d/conv2d_register.h"
#include "ops/pointwise/pointwise_register.h"
#include "ops/reduce/reduce_register.h"
#include "ops/scatter/scatter_register.h"
#include "strategies/strategies_register.h"

namespace opsched {

Status RegisterAll(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(conv2d::Register(registry));
  OPSCHED_RETURN_IF_ERROR(pointwise::Register(registry));
  OPSCHED_RETURN_IF_ERROR(reduce::Register(registry));
  OPSCHED_RETURN_IF_ERROR(scatter::Register(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterConv2dStrategies(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterPointwiseStrategy(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterReduceStrategy(registry));
  return RegisterScatterStrategy(registry);
}

Status RegisterAll() {
  static const Status* const status = new Status(RegisterAll(Registry::Global()));  // never destroyed
  return *status;
}

}  // namespace opsched
