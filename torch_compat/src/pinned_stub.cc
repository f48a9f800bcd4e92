// Tensor::is_pinned in an opreg built without CUDA: no memory is page-locked for a GPU.
#include "opreg/torch_compat/tensor.h"

namespace at {

bool Tensor::is_pinned() const { return false; }

}  // namespace at
