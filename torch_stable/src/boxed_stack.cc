// Schema-driven moves between Stack and StableIValue slots. A conversion that fails part-way
// releases what it already made, so an error never leaks a handle.
#include "boxed_stack.h"

#include <algorithm>
#include <string>

#include "opreg/core/error.h"
#include "stable_ivalue.h"

namespace opreg::torch_stable {
namespace {

std::string ArgumentName(const FunctionSchema& schema, size_t i) {
  return "[" + schema.operator_name().str() + "] argument '" + schema.arguments()[i].name() +
         "' (#" + std::to_string(i) + ")";
}

std::string ReturnName(const FunctionSchema& schema, size_t i) {
  return "[" + schema.operator_name().str() + "] return #" + std::to_string(i);
}

}  // namespace

std::vector<StableIValue> TakeArgumentsToStable(const FunctionSchema& schema, Stack* stack) {
  const auto& args = schema.arguments();
  const size_t n = args.size();
  OPREG_CHECK(stack->size() >= n, "[", schema.operator_name().str(), "] expected ", n,
              " arguments on the stack, got ", stack->size());
  std::vector<StableIValue> slots(std::max(n, schema.returns().size()), 0);
  const size_t base = stack->size() - n;
  size_t done = 0;
  try {
    for (; done < n; ++done) {
      slots[done] = ToStable((*stack)[base + done], *args[done].type(), ArgumentName(schema, done));
    }
  } catch (...) {
    for (size_t i = 0; i < done; ++i) ReleaseStable(slots[i], *args[i].type());
    throw;
  }
  stack->resize(base);
  return slots;
}

void PushReturnsFromStable(const FunctionSchema& schema, const StableIValue* slots, Stack* stack) {
  const auto& rets = schema.returns();
  size_t i = 0;
  try {
    for (; i < rets.size(); ++i) {
      stack->push_back(FromStable(slots[i], *rets[i].type(), ReturnName(schema, i)));
    }
  } catch (...) {
    for (size_t j = i + 1; j < rets.size(); ++j) ReleaseStable(slots[j], *rets[j].type());
    throw;
  }
}

Stack ArgumentsFromStable(const FunctionSchema& schema, const StableIValue* slots) {
  const auto& args = schema.arguments();
  Stack out;
  out.reserve(args.size());
  size_t i = 0;
  try {
    for (; i < args.size(); ++i) {
      out.push_back(FromStable(slots[i], *args[i].type(), ArgumentName(schema, i)));
    }
  } catch (...) {
    for (size_t j = i + 1; j < args.size(); ++j) ReleaseStable(slots[j], *args[j].type());
    throw;
  }
  return out;
}

void ReturnsToStable(const FunctionSchema& schema, const Stack& returns, StableIValue* slots) {
  const auto& rets = schema.returns();
  OPREG_CHECK(returns.size() == rets.size(), "[", schema.operator_name().str(), "] expected ",
              rets.size(), " returns, got ", returns.size());
  size_t i = 0;
  try {
    for (; i < rets.size(); ++i)
      slots[i] = ToStable(returns[i], *rets[i].type(), ReturnName(schema, i));
  } catch (...) {
    for (size_t j = 0; j < i; ++j) ReleaseStable(slots[j], *rets[j].type());
    throw;
  }
}

}  // namespace opreg::torch_stable
