#include "dist/all_gather_with_grad.h"

#include <vector>

namespace tzrec::dist {
namespace {

struct GroupCapsule : torch::CustomClassHolder {
  GroupCapsule(ProcessGroup* g, std::string w) : pg(g), what(std::move(w)) {}
  ProcessGroup* pg;
  std::string what;
};

class AllGatherFunction : public torch::autograd::Function<AllGatherFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input, ProcessGroup* pg,
                               const std::string& what) {
    const std::vector<torch::Tensor> parts = pg->all_gather(input.contiguous(), what);
    int64_t offset = 0;
    for (int r = 0; r < pg->rank(); ++r) offset += parts[static_cast<size_t>(r)].size(0);
    ctx->saved_data["offset"] = offset;
    ctx->saved_data["rows"] = input.size(0);
    ctx->saved_data["group"] = c10::IValue::make_capsule(c10::make_intrusive<GroupCapsule>(pg, what));
    return torch::cat(parts, 0);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto group = c10::static_intrusive_pointer_cast<GroupCapsule>(ctx->saved_data["group"].toCapsule());
    torch::Tensor total = grads[0].contiguous().clone();
    group->pg->all_reduce(total, ReduceOp::kSum, group->what + " (gradient)");
    const int64_t offset = ctx->saved_data["offset"].toInt();
    const int64_t rows = ctx->saved_data["rows"].toInt();
    return {total.narrow(0, offset, rows), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor all_gather_with_grad(ProcessGroup& pg, const torch::Tensor& input, const std::string& what) {
  if (pg.world_size() <= 1) return input;
  return AllGatherFunction::apply(input, &pg, what);
}

}  // namespace tzrec::dist
