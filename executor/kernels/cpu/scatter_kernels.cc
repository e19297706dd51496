// The functional forms of writes into views, as run_decompositions() records `y[:, 1:] = x` and
// `y[0].copy_(x)`: slice_scatter and select_scatter return a copy of self with src written into
// the slice (or the selected index); src must have the view's shape, and converts to self's dtype.
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

enum class Scatter { kSlice, kSelect };

// slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)
// select_scatter(Tensor self, Tensor src, int dim, SymInt index)
template <Scatter kScatter>
Status scatter_into_view(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(src, ctx.tensor("src", 1));
  if (!is_kernel_dtype(self->dtype()) || !is_kernel_dtype(src->dtype())) {
    return unsupported_dtype(ctx, is_kernel_dtype(self->dtype()) ? src->dtype() : self->dtype());
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), self->sizes()));
  NRT_TRY(view, kScatter == Scatter::kSlice ? slice_view(ctx, *out, 2) : select_view(ctx, *out, 2));
  if (view->sizes() != src->sizes()) {
    return ctx.error("src " + src->type_string() + " does not have the shape of the view it is written into, " +
                     shape_string(view->sizes()));
  }
  copy_into(*out, *self);
  copy_into(*view, *src);
  return Status::Ok();
}

// Two copies, through the device's strided copy off the host: these serve CUDA too.
const NamedKernel kScatterKernels[] = {
    {"aten::slice_scatter.default", {&scatter_into_view<Scatter::kSlice>, false}},
    {"aten::select_scatter.default", {&scatter_into_view<Scatter::kSelect>, false}},
};
const bool kScatterKernelsRegistered = register_for_devices(kScatterKernels, {DeviceKind::kCpu, DeviceKind::kCuda});

}  // namespace
}  // namespace nrt::exec::cpu
