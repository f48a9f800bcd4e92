#include "opreg/dispatch/out_resolution.h"

#include <algorithm>
#include <string>

#include "absl/container/inlined_vector.h"

#include "opreg/core/error.h"
#include "opreg/core/recycled_tensors.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/run_meta_function.h"
#include "opreg/dispatch/symmetric_memory_hooks.h"

#include "checked_once_scope.h"

namespace opreg {
namespace {

// The device the outputs go to: that of the first tensor argument (`args`: the call's).
Device CallDevice(const OpDefinition& def, const IValue* args) {
  for (uint16_t i : def.tensor_arguments) {
    const IValue& v = args[i];
    if (v.isTensor() && v.toTensor().defined()) return v.toTensor().device();
    if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) {
        if (t.defined()) return t.device();
      }
    }
  }
  return Device::cpu();
}

// An error of the out variant, as the caller of the functional op sees it: the out arguments
// it never passed become `output #k`, the other arguments get the functional op's positions,
// and the op is the one it called.
std::string AsFunctionalError(const std::string& message, const OutVariantLink& link,
                              const FunctionSchema& out_schema) {
  std::string text = message;
  auto replace_all = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
  };
  const auto& args = out_schema.arguments();
  const std::vector<size_t>& outs = link.out_argument_indices;
  for (size_t j = 0; j < args.size(); ++j) {
    const std::string given = StrCat("argument '", args[j].name(), "' (#", j, ")");
    const std::string output = StrCat("output '", args[j].name(), "' (#", j, ")");
    const auto k = std::find(outs.begin(), outs.end(), j);
    if (k != outs.end()) {
      replace_all(given, StrCat("output #", k - outs.begin()));
      replace_all(output, StrCat("output #", k - outs.begin()));
    } else {
      const auto before = std::count_if(outs.begin(), outs.end(), [j](size_t i) { return i < j; });
      const size_t position = j - static_cast<size_t>(before);  // among the out op's inputs
      const size_t index = link.input_sources.empty() ? position : link.input_sources[position];
      replace_all(given, StrCat("argument '", args[j].name(), "' (#", index, ")"));
    }
  }
  replace_all(StrCat("[", link.out.str(), "]"), StrCat("[", link.functional.str(), "]"));
  return StrCat(text, " (in ", link.out.str(), ", the out variant that computes ",
                link.functional.str(), ")");
}

}  // namespace

void AppendOutVariantStack(const OutVariantLink& link, const FunctionSchema& out_schema,
                           absl::Span<IValue> functional_arguments, absl::Span<const Tensor> outs,
                           Stack* dest) {
  const size_t m = out_schema.arguments().size();
  dest->reserve(dest->size() + m);
  size_t next_arg = 0;
  size_t next_out = 0;
  for (size_t j = 0; j < m; ++j) {
    if (next_out < link.out_argument_indices.size() && link.out_argument_indices[next_out] == j) {
      dest->emplace_back(outs[next_out++]);
    } else {
      const size_t source =
          link.input_sources.empty() ? next_arg : link.input_sources.at(next_arg);
      ++next_arg;
      OPREG_CHECK(source < functional_arguments.size(), "[", link.out.str(),
                  "] out variant expects more arguments than ", link.functional.str(), " has");
      dest->push_back(std::move(functional_arguments[source]));
    }
  }
}

Stack BuildOutVariantStack(const OutVariantLink& link, const FunctionSchema& out_schema,
                           Stack functional_arguments, const std::vector<Tensor>& outs) {
  Stack stack;
  AppendOutVariantStack(link, out_schema, absl::MakeSpan(functional_arguments), outs, &stack);
  return stack;
}

void CheckOutVariantResults(const OperatorHandle& out_op, const OutVariantLink& link,
                            const Stack& results, absl::Span<const Tensor> outs) {
  if (results.empty()) return;
  OPREG_CHECK(results.size() == outs.size(), "[", out_op.operator_name().str(), "] returned ",
              results.size(), " values for ", outs.size(), " out arguments");
  for (size_t k = 0; k < outs.size(); ++k) {
    const IValue& r = results[k];
    const Tensor& buffer = outs[k];
    const bool same =
        r.isTensor() && r.toTensor().defined() && r.toTensor().data_ptr() == buffer.data_ptr() &&
        r.toTensor().sizes() == buffer.sizes() && r.toTensor().strides() == buffer.strides() &&
        r.toTensor().dtype() == buffer.dtype() && r.toTensor().storage().is_same(buffer.storage());
    OPREG_CHECK(same, "[", out_op.operator_name().str(), "] output '", link.out_argument_names[k],
                "' (#", link.out_argument_indices[k],
                "): the kernel returned a tensor other than the buffer it was given, or resized "
                "it (expected ",
                buffer.ToString(), ", got ",
                r.isTensor() ? r.toTensor().ToString() : std::string(r.TagName()), ")");
  }
}

KernelFunction MakeOutResolutionKernel(const OperatorEntry* functional, const OperatorEntry* out,
                                       OutVariantLink link) {
  // The out variant's definition the link was made from (definitions are never freed, so the
  // address names it): while it is current, its arguments are those of the functional call,
  // already checked, and the out variant is called without checking them again.
  const OpDefinition* linked = out->definition();
  return KernelFunction::FromBoxedFunctor(
      [functional, out, linked, link = std::move(link)](const OperatorHandle& op, Stack* stack) {
        const OpDefinition& def = op.definition();
        const size_t n = def.schema.arguments().size();
        // The arguments leave the stack for a small buffer (no heap allocation for up to eight);
        // the out variant's stack is then built in the caller's stack, which the call leaves
        // holding its results.
        absl::InlinedVector<IValue, 8> args(
            std::make_move_iterator(stack->end() - static_cast<ptrdiff_t>(n)),
            std::make_move_iterator(stack->end()));
        stack->resize(stack->size() - n);

        // Sizes from the meta function; one fresh buffer per output on the call's device. The
        // scope lets the out kernel skip what the meta function checked (checked_once.h).
        internal::CheckedOnceScope once(*functional, *out, link.input_sources.empty());
        Stack specs =
            internal::RunMetaFunctionFor(OperatorHandle(functional), args.data(), n, &once);
        const Device device = CallDevice(def, args.data());
        // Only ops with a group (a `str group_name` argument) can have symmetric outs, which
        // come from that group's symmetric heap; other ops skip the lookup entirely.
        const std::optional<std::string> group = GroupNameOf(def.schema, args.data(), n);
        absl::InlinedVector<Tensor, 4> outs;
        outs.reserve(specs.size());
        for (size_t k = 0; k < specs.size(); ++k) {
          const Tensor& meta = specs[k].toTensor();
          if (group && IsSymmetricArgument(link.out, link.out_argument_names[k])) {
            outs.push_back(EmptySymmetricOut(link.out, link.out_argument_names[k], meta.sizes(),
                                             meta.dtype(), device, group));
          } else {
            outs.push_back(empty_strided(meta.sizes(), meta.strides(), meta.dtype(), device));
          }
          // The spec's objects serve the next meta tensor made on this thread.
          Tensor spec = std::move(specs[k]).toTensor();
          RecycledTensors::Give(&spec, RecyclePool::kOwned);
        }

        OperatorHandle out_op(out);
        // The out variant's call needs a stack of its own values only: the caller's, when the
        // functional call's arguments were all it held.
        Stack separate;
        Stack* out_stack = stack->empty() ? stack : &separate;
        AppendOutVariantStack(link, out_op.schema(), absl::MakeSpan(args), outs, out_stack);
        try {
          // `outs` were made just above, the other arguments are the functional call's.
          if (out->definition() == linked) once.Arm(out_stack->data(), out_stack->size());
          out_op.CallBoxedPreparedWithFreshOuts(out_stack, device.type, linked);
          CheckOutVariantResults(out_op, link, *out_stack, outs);
        } catch (const Error& e) {
          throw Error(e.kind(), AsFunctionalError(e.message(), link, out_op.schema()));
        }
        out_stack->clear();  // the out variant's returns: the same tensors as `outs`
        for (Tensor& t : outs) stack->emplace_back(std::move(t));
      });
}

}  // namespace opreg
