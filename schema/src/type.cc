#include "opreg/schema/type.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace opreg {
namespace {

constexpr int kNumLeafKinds = static_cast<int>(TypeKind::kNone) + 1;

// Printed names of the leaf kinds, in TypeKind order.
constexpr std::array<const char*, kNumLeafKinds> kLeafNames = {
    "Tensor",       "int",     "SymInt", "float",        "SymFloat",    "complex",
    "bool",         "SymBool", "str",    "Scalar",       "ScalarType",  "Layout",
    "MemoryFormat", "Device",  "Stream", "Generator",    "Storage",     "QScheme",
    "Quantizer",    "Capsule", "Any",    "AnyClassType", "AnyEnumType", "NoneType"};

bool IsLeaf(TypeKind kind) { return static_cast<int>(kind) < kNumLeafKinds; }

TypePtr Make(TypeKind kind, std::vector<TypePtr> contained, std::string name = {}) {
  return std::make_shared<const Type>(kind, std::move(contained), std::move(name));
}

std::string JoinTypes(const std::vector<TypePtr>& types) {
  return absl::StrJoin(types, ", ",
                       [](std::string* out, const TypePtr& t) { out->append(t->str()); });
}

}  // namespace

TypePtr Type::Get(TypeKind kind) {
  // Built once; shared by every schema.
  static const std::array<TypePtr, kNumLeafKinds> singletons = [] {
    std::array<TypePtr, kNumLeafKinds> s;
    for (int i = 0; i < kNumLeafKinds; ++i) s[i] = Make(static_cast<TypeKind>(i), {});
    return s;
  }();
  return IsLeaf(kind) ? singletons[static_cast<int>(kind)] : nullptr;
}

TypePtr Type::List(TypePtr element) { return Make(TypeKind::kList, {std::move(element)}); }
TypePtr Type::Optional(TypePtr element) { return Make(TypeKind::kOptional, {std::move(element)}); }
TypePtr Type::Tuple(std::vector<TypePtr> elements) {
  return Make(TypeKind::kTuple, std::move(elements));
}
TypePtr Type::Dict(TypePtr key, TypePtr value) {
  return Make(TypeKind::kDict, {std::move(key), std::move(value)});
}
TypePtr Type::Union(std::vector<TypePtr> members) {
  return Make(TypeKind::kUnion, std::move(members));
}
TypePtr Type::Future(TypePtr element) { return Make(TypeKind::kFuture, {std::move(element)}); }
TypePtr Type::Await(TypePtr element) { return Make(TypeKind::kAwait, {std::move(element)}); }
TypePtr Type::RRef(TypePtr element) { return Make(TypeKind::kRRef, {std::move(element)}); }
TypePtr Type::Class(std::string qualified_name) {
  return Make(TypeKind::kClass, {}, std::move(qualified_name));
}
TypePtr Type::Var(std::string name) { return Make(TypeKind::kVar, {}, std::move(name)); }

std::string Type::str() const {
  if (IsLeaf(kind_)) return kLeafNames[static_cast<int>(kind_)];
  switch (kind_) {
    case TypeKind::kList:
      return absl::StrCat(element()->str(), "[]");
    case TypeKind::kOptional:
      return absl::StrCat(element()->str(), "?");
    case TypeKind::kTuple:
      return absl::StrCat("(", JoinTypes(contained_), ")");
    case TypeKind::kDict:
      return absl::StrCat("Dict(", JoinTypes(contained_), ")");
    case TypeKind::kUnion:
      return absl::StrCat("Union(", JoinTypes(contained_), ")");
    case TypeKind::kFuture:
      return absl::StrCat("Future(", element()->str(), ")");
    case TypeKind::kAwait:
      return absl::StrCat("Await(", element()->str(), ")");
    case TypeKind::kRRef:
      return absl::StrCat("RRef(", element()->str(), ")");
    case TypeKind::kClass:
    case TypeKind::kVar:
      return name_;
    default:
      return "<unknown type>";
  }
}

TypePtr Type::FakeType(const TypePtr& self) const {
  switch (kind_) {
    case TypeKind::kSymInt:
    case TypeKind::kScalarType:
    case TypeKind::kLayout:
    case TypeKind::kMemoryFormat:
      return Get(TypeKind::kInt);
    default:
      break;
  }
  if (contained_.empty()) return self;
  bool changed = false;
  std::vector<TypePtr> fake;
  fake.reserve(contained_.size());
  for (const TypePtr& t : contained_) {
    fake.push_back(t->FakeType(t));
    changed |= fake.back() != t;
  }
  return changed ? Make(kind_, std::move(fake), name_) : self;
}

bool Type::Equals(const Type& other) const {
  if (kind_ != other.kind_ || name_ != other.name_ ||
      contained_.size() != other.contained_.size()) {
    return false;
  }
  for (size_t i = 0; i < contained_.size(); ++i) {
    if (!contained_[i]->Equals(*other.contained_[i])) return false;
  }
  return true;
}

const TypePtr& StripOptional(const TypePtr& type) {
  return type->kind() == TypeKind::kOptional ? type->element() : type;
}

bool IsTensorLike(const Type& type) {
  switch (type.kind()) {
    case TypeKind::kTensor:
      return true;
    case TypeKind::kOptional:
      return type.element()->kind() == TypeKind::kTensor;
    case TypeKind::kList: {
      const Type& e = *type.element();
      return e.kind() == TypeKind::kTensor ||
             (e.kind() == TypeKind::kOptional && e.element()->kind() == TypeKind::kTensor);
    }
    default:
      return false;
  }
}

}  // namespace opreg
