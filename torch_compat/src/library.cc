// torch::Library's mapping of dispatch keys and tags onto opreg's registry.
#include "opreg/torch_compat/library.h"

namespace c10 {

const char* toString(DispatchKey key) {
  switch (key) {
#define OPREG_CASE_(name) \
  case DispatchKey::name: \
    return #name;
    OPREG_CASE_(CPU)
    OPREG_CASE_(CUDA)
    OPREG_CASE_(Meta)
    OPREG_CASE_(CompositeExplicitAutograd)
    OPREG_CASE_(CompositeImplicitAutograd)
    OPREG_CASE_(CompositeExplicitAutogradNonFunctional)
    OPREG_CASE_(Autograd)
    OPREG_CASE_(AutogradCPU)
    OPREG_CASE_(AutogradCUDA)
    OPREG_CASE_(AutocastCPU)
    OPREG_CASE_(AutocastCUDA)
    OPREG_CASE_(BackendSelect)
    OPREG_CASE_(Python)
    OPREG_CASE_(FuncTorchBatched)
    OPREG_CASE_(PrivateUse1)
    OPREG_CASE_(HIP)
    OPREG_CASE_(XPU)
#undef OPREG_CASE_
  }
  return "UNKNOWN_DISPATCH_KEY";
}

std::optional<::opreg::DispatchKey> ToOpregDispatchKey(DispatchKey key) {
  switch (key) {
    case DispatchKey::CPU:
      return ::opreg::DispatchKey::kCPU;
    case DispatchKey::CUDA:
      return ::opreg::DispatchKey::kCUDA;
    case DispatchKey::Meta:
      return ::opreg::DispatchKey::kMeta;
    case DispatchKey::CompositeExplicitAutograd:
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      return ::opreg::DispatchKey::kCompositeExplicit;
    case DispatchKey::CompositeImplicitAutograd:
      return ::opreg::DispatchKey::kCompositeImplicit;
    default:
      return std::nullopt;
  }
}

std::optional<::opreg::DispatchKey> ToOpregDispatchKey(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return ::opreg::DispatchKey::kCPU;
    case DeviceType::CUDA:
      return ::opreg::DispatchKey::kCUDA;
    case DeviceType::Meta:
      return ::opreg::DispatchKey::kMeta;
    default:
      return std::nullopt;
  }
}

}  // namespace c10

namespace at {

const char* toString(Tag tag) {
  switch (tag) {
#define OPREG_CASE_(name) \
  case Tag::name:         \
    return #name;
    OPREG_CASE_(core)
    OPREG_CASE_(cudagraph_unsafe)
    OPREG_CASE_(data_dependent_output)
    OPREG_CASE_(dynamic_output_shape)
    OPREG_CASE_(flexible_layout)
    OPREG_CASE_(generated)
    OPREG_CASE_(inplace_view)
    OPREG_CASE_(maybe_aliasing_or_mutating)
    OPREG_CASE_(needs_contiguous_strides)
    OPREG_CASE_(needs_exact_strides)
    OPREG_CASE_(needs_fixed_stride_order)
    OPREG_CASE_(nondeterministic_bitwise)
    OPREG_CASE_(nondeterministic_seeded)
    OPREG_CASE_(pointwise)
    OPREG_CASE_(pt2_compliant_tag)
    OPREG_CASE_(view_copy)
#undef OPREG_CASE_
  }
  return "unknown_tag";
}

}  // namespace at

namespace torch {

Library& Library::def(const char* schema, const std::vector<at::Tag>& tags, const char* file,
                      int line) {
  std::vector<std::string> names;
  names.reserve(tags.size());
  for (at::Tag t : tags) names.emplace_back(at::toString(t));
  lib_.def(schema, std::move(names), file, line);
  return *this;
}

void Library::RecordUnsupportedKey(const char* name, const char* key_name, const char* file,
                                   int line) {
  lib_.fail(::c10::str("impl(\"", name, "\"): dispatch key ", key_name,
                       " has no opreg counterpart (opreg has CPU, CUDA, Meta, "
                       "CompositeExplicitAutograd and CompositeImplicitAutograd)"),
            file, line);
}

}  // namespace torch
