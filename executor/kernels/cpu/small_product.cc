#include "executor/kernels/cpu/small_product.h"

#include "executor/kernels/cpu/cpu_features.h"

namespace nrt::exec::cpu {

bool small_product_available() { return cpu_has_avx512f(); }

}  // namespace nrt::exec::cpu
