// Kernels for the executor's own tests, registered on the CPU under the `nrt_test::` namespace
// (never under aten names, so they cannot collide with the real kernel library). All work on
// float32 tensors of any shape (contiguous inputs). `stash` and `read_stash` deliberately read a
// value after its lifetime, for the poison-mode test.
#pragma once

#include <string>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::testing {

// Targets (register in test_kernels.cc):
//   nrt_test::add(self, other)            elementwise sum, same shapes
//   nrt_test::scale(self, factor: float)  self * factor
//   nrt_test::alias(self)                 view: returns self (is_view)
//   nrt_test::halves(self)                view: a list of the two halves along dim 0 (is_view)
//   nrt_test::sum_list(tensors)           elementwise sum of a tensor list
//   nrt_test::size(self, dim)             self.size(dim) as an int (a SymInt value)
//   nrt_test::sum_ints(values: SymInt[])  the sum, as an int
//   nrt_test::stash(self)                 copy of self; remembers self itself
//   nrt_test::read_stash(self)            self + the remembered tensor (read after its lifetime)
//   nrt_test::bad_alias(self)             returns self but is NOT registered as a view
//   nrt_test::wrong_shape(self)           returns a tensor of one more element
//   nrt_test::fail(self)                  always fails
//   nrt_test::pair_or_wrong(self)         (self, self); if self[0] < 0 a wrong shape and an int
//   nrt_test::zeros4(self)                zeros [n, n, n, n], n = self.size(0)
//   nrt_test::group_size(group)           the bound ProcessGroup's size, -1 when unbound
void link_test_kernels();  // referenced by tests so the registrations are linked

}  // namespace nrt::testing
