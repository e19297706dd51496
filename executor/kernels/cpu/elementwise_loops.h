// Element-wise maps over operands of one shape: the output's sizes. Inputs are LoopOperands laid
// out along that shape (elementwise_operands.h builds them broadcast and in the storage types
// named here), or tensors of exactly that shape. `f` receives compute_t values and returns the
// output's compute type; loads and stores convert Half/BFloat16. Runs whose operands are all
// contiguous, or contiguous with stride-0 (scalar) inputs, get tight loops the compiler vectorises;
// a large flat map is split over the intra-op threads (for_each_run_parallel). A binary map's input
// laid out as the transpose of its output is read through a copy in the output's layout
// (batched_transpose.h).
#pragma once

#include "executor/kernels/cpu/batched_transpose.h"
#include "executor/kernels/cpu/element_conversion.h"
#include "executor/kernels/cpu/loop_operand.h"
#include "executor/kernels/cpu/strided_iteration.h"

namespace nrt::exec::cpu {

template <class Out, class In, class F>
void map_unary(const Tensor& out, const LoopOperand& in, F f) {
  const LoopOperand o = LoopOperand::of(out);
  for_each_run_parallel<2>(out.sizes(), {&o, &in}, [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s,
                                             int64_t n) {
    Out* y = reinterpret_cast<Out*>(p[0]);
    const In* a = reinterpret_cast<const In*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      for (int64_t i = 0; i < n; ++i) y[i] = store<Out>(f(load(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = store<Out>(f(load(*reinterpret_cast<const In*>(p[1] + i * s[1]))));
      }
    }
  });
}

template <class Out, class In, class F>
void map_unary(const Tensor& out, const Tensor& in, F f) {
  map_unary<Out, In>(out, LoopOperand::of(in), f);
}

// map_binary once every input is read along the output's layout or as it is.
template <class Out, class A, class B, class F>
void map_binary_runs(const Tensor& out, const LoopOperand& a, const LoopOperand& b, F f) {
  const LoopOperand o = LoopOperand::of(out);
  for_each_run_parallel<3>(out.sizes(), {&o, &a, &b}, [&](const std::array<uint8_t*, 3>& p, const std::array<int64_t, 3>& s,
                                                 int64_t n) {
    Out* y = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* z = reinterpret_cast<const B*>(p[2]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) y[i] = store<Out>(f(load(x[i]), load(z[i])));
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == 0) {
      const auto zv = load(*z);
      for (int64_t i = 0; i < n; ++i) y[i] = store<Out>(f(load(x[i]), zv));
    } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(B)) {
      const auto xv = load(*x);
      for (int64_t i = 0; i < n; ++i) y[i] = store<Out>(f(xv, load(z[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = store<Out>(
            f(load(*reinterpret_cast<const A*>(p[1] + i * s[1])), load(*reinterpret_cast<const B*>(p[2] + i * s[2]))));
      }
    }
  });
}

template <class Out, class A, class B, class F>
void map_binary(const Tensor& out, const LoopOperand& a, const LoopOperand& b, F f) {
  if constexpr (sizeof(Out) == 4 && sizeof(A) == 4 && sizeof(B) == 4) {
    const Tensor a_copy = laid_out_as(out, a), b_copy = laid_out_as(out, b);
    if (a_copy.defined() || b_copy.defined()) {
      const LoopOperand a_read = a_copy.defined() ? LoopOperand::of(a_copy) : a;
      const LoopOperand b_read = b_copy.defined() ? LoopOperand::of(b_copy) : b;
      return map_binary_runs<Out, A, B>(out, a_read, b_read, f);
    }
  }
  map_binary_runs<Out, A, B>(out, a, b, f);
}

template <class Out, class A, class B, class F>
void map_binary(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  map_binary<Out, A, B>(out, LoopOperand::of(a), LoopOperand::of(b), f);
}

template <class Out, class A, class B, class C, class F>
void map_ternary(const Tensor& out, const LoopOperand& a, const LoopOperand& b, const LoopOperand& c, F f) {
  const LoopOperand o = LoopOperand::of(out);
  for_each_run_parallel<4>(out.sizes(), {&o, &a, &b, &c},
                  [&](const std::array<uint8_t*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) {
                      *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                          store<Out>(f(load(*reinterpret_cast<const A*>(p[1] + i * s[1])),
                                       load(*reinterpret_cast<const B*>(p[2] + i * s[2])),
                                       load(*reinterpret_cast<const C*>(p[3] + i * s[3]))));
                    }
                  });
}

}  // namespace nrt::exec::cpu
