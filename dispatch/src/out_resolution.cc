#include "opreg/dispatch/out_resolution.h"

#include <algorithm>
#include <string>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/dispatch/run_meta_function.h"
#include "opreg/dispatch/symmetric_memory_hooks.h"

namespace opreg {
namespace {

// The device the outputs go to: that of the first tensor argument.
Device CallDevice(const OpDefinition& def, const Stack& args) {
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

Stack BuildOutVariantStack(const OutVariantLink& link, const FunctionSchema& out_schema,
                           Stack functional_arguments, const std::vector<Tensor>& outs) {
  const size_t m = out_schema.arguments().size();
  Stack stack;
  stack.reserve(m);
  size_t next_arg = 0;
  size_t next_out = 0;
  for (size_t j = 0; j < m; ++j) {
    if (next_out < link.out_argument_indices.size() && link.out_argument_indices[next_out] == j) {
      stack.emplace_back(outs[next_out++]);
    } else {
      const size_t source =
          link.input_sources.empty() ? next_arg : link.input_sources.at(next_arg);
      ++next_arg;
      OPREG_CHECK(source < functional_arguments.size(), "[", link.out.str(),
                  "] out variant expects more arguments than ", link.functional.str(), " has");
      stack.push_back(std::move(functional_arguments[source]));
    }
  }
  return stack;
}

void CheckOutVariantResults(const OperatorHandle& out_op, const OutVariantLink& link,
                            const Stack& results, const std::vector<Tensor>& outs) {
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
  return KernelFunction::FromBoxedFunctor(
      [functional, out, link = std::move(link)](const OperatorHandle& op, Stack* stack) {
        const OpDefinition& def = op.definition();
        const size_t n = def.schema.arguments().size();
        Stack args(std::make_move_iterator(stack->end() - static_cast<ptrdiff_t>(n)),
                   std::make_move_iterator(stack->end()));
        stack->resize(stack->size() - n);

        // Sizes from the meta function; one fresh buffer per output on the call's device.
        const Stack specs = RunMetaFunction(OperatorHandle(functional), args);
        const Device device = CallDevice(def, args);
        // Only ops with a group (a `str group_name` argument) can have symmetric outs, which
        // come from that group's symmetric heap; other ops skip the lookup entirely.
        const std::optional<std::string> group = GroupNameOf(def.schema, args);
        std::vector<Tensor> outs;
        outs.reserve(specs.size());
        for (size_t k = 0; k < specs.size(); ++k) {
          const Tensor& meta = specs[k].toTensor();
          if (group && IsSymmetricArgument(link.out, link.out_argument_names[k])) {
            outs.push_back(EmptySymmetricOut(link.out, link.out_argument_names[k], meta.sizes(),
                                             meta.dtype(), device, group));
          } else {
            outs.push_back(empty_strided(meta.sizes(), meta.strides(), meta.dtype(), device));
          }
        }

        OperatorHandle out_op(out);
        Stack out_stack = BuildOutVariantStack(link, out_op.schema(), std::move(args), outs);
        try {
          out_op.CallBoxedWithFreshOuts(&out_stack);  // `outs` were made just above
          CheckOutVariantResults(out_op, link, out_stack, outs);
        } catch (const Error& e) {
          throw Error(e.kind(), AsFunctionalError(e.message(), link, out_op.schema()));
        }
        for (Tensor& t : outs) stack->emplace_back(std::move(t));
      });
}

}  // namespace opreg
