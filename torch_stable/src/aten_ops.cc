// The private aten op table of the stable shim (see aten_ops.h). Each entry is torch's schema,
// so the boxed stack of a stable-ABI call is converted by the same schema-driven code as for any
// opreg op, and a kernel compiled against torch's headers passes the arguments torch would.
#include "aten_ops.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "opreg/core/error.h"
#include "opreg/schema/schema_parser.h"
#include "opreg/torch_compat/tensor.h"

namespace opreg::torch_stable {
namespace {

at::Tensor T(const IValue& v) { return at::Tensor(v.toTensor()); }

std::optional<c10::ScalarType> OptDType(const IValue& v) {
  if (v.isNone()) return std::nullopt;
  return static_cast<c10::ScalarType>(v.toInt());
}

at::TensorOptions Options(const IValue& dtype, const IValue& device,
                          const at::TensorOptions& base) {
  at::TensorOptions o = base;
  if (!dtype.isNone()) o = o.dtype(static_cast<c10::ScalarType>(dtype.toInt()));
  if (!device.isNone()) o = o.device(c10::Device(device.toDevice()));
  return o;
}

at::TensorOptions OptionsOf(const at::Tensor& t) {
  return at::TensorOptions().dtype(t.scalar_type()).device(t.device());
}

void Returns(Stack* s, IValue v) {
  s->clear();
  s->push_back(std::move(v));
}

IValue Out(const at::Tensor& t) { return IValue(t.opreg()); }

void EmptyMemoryFormat(Stack* s) {
  // (SymInt[] size, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory,
  //  MemoryFormat? memory_format)
  const std::vector<int64_t> size = (*s)[0].toIntList();
  Returns(s, Out(at::empty(size, Options((*s)[1], (*s)[3], at::TensorOptions()))));
}

void EmptyLike(Stack* s) {
  const at::Tensor self = T((*s)[0]);
  Returns(s, Out(at::empty(self.sizes(), Options((*s)[1], (*s)[3], OptionsOf(self)))));
}

void NewEmpty(Stack* s) {
  const at::Tensor self = T((*s)[0]);
  const std::vector<int64_t> size = (*s)[1].toIntList();
  Returns(s, Out(at::empty(size, Options((*s)[2], (*s)[4], OptionsOf(self)))));
}

void NewZeros(Stack* s) {
  const at::Tensor self = T((*s)[0]);
  const std::vector<int64_t> size = (*s)[1].toIntList();
  Returns(s, Out(at::zeros(size, Options((*s)[2], (*s)[4], OptionsOf(self)))));
}

void Zero(Stack* s) {
  T((*s)[0]).zero_();
  s->resize(1);
}

void Copy(Stack* s) {
  T((*s)[0]).copy_(T((*s)[1]), (*s)[2].toBool());
  s->resize(1);
}

void Clone(Stack* s) { Returns(s, Out(T((*s)[0]).clone())); }

void Contiguous(Stack* s) { Returns(s, Out(T((*s)[0]).contiguous())); }

void Flatten(Stack* s) { Returns(s, Out(T((*s)[0]).flatten((*s)[1].toInt(), (*s)[2].toInt()))); }

void Reshape(Stack* s) { Returns(s, Out(T((*s)[0]).reshape((*s)[1].toIntList()))); }

void View(Stack* s) { Returns(s, Out(T((*s)[0]).view((*s)[1].toIntList()))); }

void ViewDType(Stack* s) {
  Returns(s, Out(T((*s)[0]).view(static_cast<c10::ScalarType>((*s)[1].toInt()))));
}

void Transpose(Stack* s) {
  Returns(s, Out(T((*s)[0]).transpose((*s)[1].toInt(), (*s)[2].toInt())));
}

void Unsqueeze(Stack* s) { Returns(s, Out(T((*s)[0]).unsqueeze((*s)[1].toInt()))); }

void SqueezeDim(Stack* s) { Returns(s, Out(T((*s)[0]).squeeze((*s)[1].toInt()))); }

void SelectInt(Stack* s) { Returns(s, Out(T((*s)[0]).select((*s)[1].toInt(), (*s)[2].toInt()))); }

void Permute(Stack* s) { Returns(s, Out(T((*s)[0]).permute((*s)[1].toIntList()))); }

std::vector<int64_t> Dims(const IValue& dim, int64_t ndim) {
  if (!dim.isNone() && !dim.toIntList().empty()) return dim.toIntList();
  std::vector<int64_t> all;
  for (int64_t d = 0; d < ndim; ++d) all.push_back(d);
  return all;
}

void SumDim(Stack* s) {
  const at::Tensor self = T((*s)[0]);
  Returns(s, Out(at::sum(self, Dims((*s)[1], self.dim()), (*s)[2].toBool(), OptDType((*s)[3]))));
}

void SumOut(Stack* s) {
  const at::Tensor self = T((*s)[0]);
  at::Tensor out = T((*s)[4]);
  at::sum_out(out, self, Dims((*s)[1], self.dim()), (*s)[2].toBool(), OptDType((*s)[3]));
  Returns(s, Out(out));
}

void ToDTypeLayout(Stack* s) {
  // (Tensor(a) self, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory,
  //  bool non_blocking, bool copy, MemoryFormat? memory_format)
  const at::Tensor self = T((*s)[0]);
  const at::TensorOptions o = Options((*s)[1], (*s)[3], OptionsOf(self));
  Returns(s, Out(self.to(o, (*s)[5].toBool(), (*s)[6].toBool())));
}

void IsPinned(Stack* s) { Returns(s, IValue(T((*s)[0]).is_pinned())); }

// The broadcasting binary ops: (Tensor self, Tensor other) -> Tensor.
template <at::Tensor (*Op)(const at::Tensor&, const at::Tensor&)>
void BinaryOp(Stack* s) {
  Returns(s, Out(Op(T((*s)[0]), T((*s)[1]))));
}

void SubTensor(Stack* s) {
  Returns(s, Out(at::sub(T((*s)[0]), T((*s)[1]), Scalar::FromIValue((*s)[2]))));
}

void AmaxDims(Stack* s) {
  Returns(s, Out(at::amax(T((*s)[0]), (*s)[1].toIntList(), (*s)[2].toBool())));
}

void IndexSelect(Stack* s) {
  Returns(s, Out(at::index_select(T((*s)[0]), (*s)[1].toInt(), T((*s)[2]))));
}

void SortReturns(Stack* s, std::tuple<at::Tensor, at::Tensor> r) {
  s->clear();
  s->push_back(Out(std::get<0>(r)));
  s->push_back(Out(std::get<1>(r)));
}

void Sort(Stack* s) { SortReturns(s, at::sort(T((*s)[0]), (*s)[1].toInt(), (*s)[2].toBool())); }

void SortStable(Stack* s) {
  const std::optional<bool> stable =
      (*s)[1].isNone() ? std::nullopt : std::optional<bool>((*s)[1].toBool());
  SortReturns(s, at::sort(T((*s)[0]), stable, (*s)[2].toInt(), (*s)[3].toBool()));
}

struct Entry {
  const char* schema;
  void (*run)(Stack*);
};

// torch's schemas (native_functions.yaml) of the overloads torch's stable headers call.
constexpr Entry kEntries[] = {
    {"aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
     "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
     &EmptyMemoryFormat},
    {"aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
     "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
     &EmptyLike},
    {"aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
     "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     &NewEmpty},
    {"aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
     "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     &NewZeros},
    {"aten::zero_(Tensor(a!) self) -> Tensor(a!)", &Zero},
    {"aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", &Copy},
    {"aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", &Clone},
    {"aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> "
     "Tensor(a)",
     &Contiguous},
    {"aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
     &Flatten},
    {"aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", &Reshape},
    {"aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", &View},
    {"aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", &ViewDType},
    {"aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", &Transpose},
    {"aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", &Unsqueeze},
    {"aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", &SqueezeDim},
    {"aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", &SelectInt},
    {"aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", &Permute},
    {"aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
     "dtype=None) -> Tensor",
     &SumDim},
    {"aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
     "dtype=None, Tensor(a!) out) -> Tensor(a!)",
     &SumOut},
    {"aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
     "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
     "MemoryFormat? memory_format=None) -> Tensor(a)",
     &ToDTypeLayout},
    {"aten::is_pinned(Tensor self, Device? device=None) -> bool", &IsPinned},
    {"aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", &AmaxDims},
    {"aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", &SubTensor},
    {"aten::subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", &SubTensor},
    {"aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor", &BinaryOp<at::bitwise_and>},
    {"aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor", &BinaryOp<at::bitwise_or>},
    {"aten::bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor",
     &BinaryOp<at::bitwise_left_shift>},
    {"aten::bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor",
     &BinaryOp<at::bitwise_right_shift>},
    {"aten::floor_divide(Tensor self, Tensor other) -> Tensor", &BinaryOp<at::floor_divide>},
    {"aten::matmul(Tensor self, Tensor other) -> Tensor", &BinaryOp<at::matmul>},
    {"aten::index_select(Tensor self, int dim, Tensor index) -> Tensor", &IndexSelect},
    {"aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
     "indices)",
     &Sort},
    {"aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
     "(Tensor values, Tensor indices)",
     &SortStable},
};

using Table = absl::flat_hash_map<std::string, AtenOp>;

const Table& GetTable() {
  static const Table* const table = [] {
    auto* t = new Table();
    for (const Entry& e : kEntries) {
      absl::StatusOr<FunctionSchema> schema = ParseSchema(e.schema);
      OPREG_CHECK(schema.ok(), "torch_stable: bad built-in aten schema ", e.schema, ": ",
                  schema.status().message());
      std::string name = schema->operator_name().str();
      t->emplace(std::move(name), AtenOp{*std::move(schema), e.run});
    }
    return t;
  }();
  return *table;
}

}  // namespace

const AtenOp* FindAtenOp(std::string_view qualified_name) {
  const Table& table = GetTable();
  auto it = table.find(std::string(qualified_name));
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace opreg::torch_stable
