// The types of PyTorch's schema language (c10's "real" types), as parsed from a schema.
//
// A Type is immutable and shared through TypePtr; leaf types are process-wide singletons.
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace opreg {

enum class TypeKind : unsigned char {
  // Leaves.
  kTensor,
  kInt,
  kSymInt,
  kFloat,
  kSymFloat,
  kComplex,
  kBool,
  kSymBool,
  kStr,
  kScalar,  // c10 NumberType: int, float, bool or complex
  kScalarType,
  kLayout,
  kMemoryFormat,
  kDevice,
  kStream,
  kGenerator,
  kStorage,
  kQScheme,
  kQuantizer,
  kCapsule,
  kAny,
  kAnyClass,
  kAnyEnum,
  kNone,
  // Containers.
  kList,
  kOptional,
  kTuple,
  kDict,
  kUnion,
  kFuture,
  kAwait,
  kRRef,
  // Named.
  kClass,  // a registered custom class / opaque type, by qualified (dotted) name
  kVar,    // a type variable such as `t` (aten:: and prim:: schemas only)
};

class Type;
using TypePtr = std::shared_ptr<const Type>;

class Type {
 public:
  // The singleton of a leaf kind. Calling it with a container or named kind is a bug
  // (returns nullptr).
  static TypePtr Get(TypeKind kind);
  static TypePtr List(TypePtr element);
  static TypePtr Optional(TypePtr element);
  static TypePtr Tuple(std::vector<TypePtr> elements);
  static TypePtr Dict(TypePtr key, TypePtr value);
  static TypePtr Union(std::vector<TypePtr> members);
  static TypePtr Future(TypePtr element);
  static TypePtr Await(TypePtr element);
  static TypePtr RRef(TypePtr element);
  static TypePtr Class(std::string qualified_name);
  static TypePtr Var(std::string name);

  TypeKind kind() const { return kind_; }
  const std::vector<TypePtr>& contained() const { return contained_; }
  // The element of a List/Optional/Future/Await/RRef.
  const TypePtr& element() const { return contained_.front(); }
  // Qualified name of a class type, or the name of a type variable.
  const std::string& name() const { return name_; }

  // PyTorch's `str()`: `Tensor`, `int[]`, `Tensor?`, `(int, str)`, `Dict(str, Tensor)`, ...
  std::string str() const;
  // The kernel-facing ("fake") type: SymInt, ScalarType, Layout and MemoryFormat become int,
  // recursively inside containers. Returns this type when nothing changes.
  TypePtr FakeType(const TypePtr& self) const;

  // Structural equality.
  bool Equals(const Type& other) const;

  Type(TypeKind kind, std::vector<TypePtr> contained, std::string name)
      : kind_(kind), contained_(std::move(contained)), name_(std::move(name)) {}

 private:
  TypeKind kind_;
  std::vector<TypePtr> contained_;
  std::string name_;
};

// The type with an outer Optional removed (or the type itself).
const TypePtr& StripOptional(const TypePtr& type);
// True for Tensor, Tensor?, Tensor[] and Tensor?[]: the argument types that carry dispatch keys.
bool IsTensorLike(const Type& type);

}  // namespace opreg
