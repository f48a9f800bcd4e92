// The aten ops that torch's stable headers reach through torch_call_dispatcher ("aten::view",
// "aten::transpose.int", ...), implemented over opreg::torch_compat's at:: functions. They are
// private to the shim: not opreg ops, so `opreg ops` and opreg.torch never see them.
#pragma once

#include <string_view>

#include "opreg/core/ivalue.h"
#include "opreg/schema/function_schema.h"

namespace opreg::torch_stable {

struct AtenOp {
  FunctionSchema schema;     // torch's schema of the overload
  void (*run)(Stack* args);  // replaces the arguments with the returns
};

// nullptr when the shim has no such aten overload (`aten::name` or `aten::name.overload`).
const AtenOp* FindAtenOp(std::string_view qualified_name);

}  // namespace opreg::torch_stable
