// Base class of C++ objects that can travel in an IValue (kObject): PyTorch's custom classes
// (`__torch__.torch.classes.ns.Name`), e.g. a symmetric-memory handle.
#pragma once

#include <string_view>

#include "opreg/core/intrusive_ptr.h"

namespace opreg {

// Derive from this and hold instances in intrusive_ptr. Thread safety is the subclass's business.
class CustomClassHolder : public intrusive_ptr_target {
 public:
  // The qualified class name used in schemas and error messages.
  virtual std::string_view class_name() const = 0;
};

}  // namespace opreg
