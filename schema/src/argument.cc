#include "opreg/schema/argument.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "opreg/core/device.h"

namespace opreg {
namespace {

// Appends `type` with its alias annotation where PyTorch writes it: a list's element
// annotation before `[]`, the container's own after `[]`, and every annotation before `?`.
// PyTorch prints an optional list element as `Tensor?(a!)[]`, which its parser rejects; this
// prints `Tensor(a!)?[]`, which parses back to the same model. `N` is the size of a
// fixed-size list at the top of an argument's type.
void AppendTypeWithAlias(std::string* out, const Type& type, const AliasInfo* alias,
                         std::optional<int32_t> N) {
  switch (type.kind()) {
    case TypeKind::kOptional:
      AppendTypeWithAlias(out, *type.element(), alias, N);
      out->push_back('?');
      return;
    case TypeKind::kList: {
      const AliasInfo* element_alias =
          alias != nullptr && !alias->contained().empty() ? &alias->contained()[0] : nullptr;
      AppendTypeWithAlias(out, *type.element(), element_alias, std::nullopt);
      absl::StrAppend(out, "[", N ? absl::StrCat(*N) : "", "]");
      break;
    }
    default:
      out->append(type.str());
      break;
  }
  if (alias != nullptr && !alias->before_sets().empty()) out->append(alias->str());
}

// PyTorch prints `int[2] stride=[1, 1]` as `int[2] stride=1`: an int list (not SymInt, not
// optional) of more than one element, all equal, prints as that element. PyTorch does so for
// unsized lists too (`int[] d=[-1, -1]` prints `int[] d=-1`), which no parser reads back, since
// only a sized list takes a scalar default (replicated N times); opreg collapses a list
// only when it has exactly N elements.
bool PrintsCollapsed(const Type& type, std::optional<int32_t> N, const IValue& value) {
  if (!N || type.kind() != TypeKind::kList || type.element()->kind() != TypeKind::kInt ||
      !value.isIntList()) {
    return false;
  }
  const std::vector<int64_t>& list = value.toIntList();
  // Only a list of exactly N elements reads back from the collapsed form.
  if (list.size() <= 1 || list.size() != static_cast<size_t>(*N)) return false;
  for (int64_t v : list) {
    if (v != list.front()) return false;
  }
  return true;
}

// PyTorch quotes string defaults of str arguments only and prints other string values bare:
// `Device? d=cuda` reads back (the parser takes that form), but `bool? b="x"` would print as the
// unreadable `bool? b=x`. opreg keeps PyTorch's bare form for device strings on Device
// arguments and quotes every other string.
bool PrintsAsDevice(const Type& type, const std::string& value) {
  const Type& t = type.kind() == TypeKind::kOptional ? *type.element() : type;
  return t.kind() == TypeKind::kDevice && Device::Parse(value).ok();
}

}  // namespace

Argument::Argument(std::string name, TypePtr type, std::optional<int32_t> N,
                   std::optional<IValue> default_value, bool kwarg_only,
                   std::optional<AliasInfo> alias_info)
    : name_(std::move(name)),
      type_(std::move(type)),
      fake_type_(type_->FakeType(type_)),
      N_(N),
      default_value_(std::move(default_value)),
      kwarg_only_(kwarg_only),
      alias_info_(std::move(alias_info)) {}

std::string Argument::str() const {
  std::string out;
  AppendTypeWithAlias(&out, *type_, alias_info_ ? &*alias_info_ : nullptr, N_);
  if (!name_.empty()) absl::StrAppend(&out, " ", name_);
  if (default_value_) {
    out.push_back('=');
    const IValue& value = *default_value_;
    if (value.isString() && !PrintsAsDevice(*type_, value.toStringRef())) {
      out.append(QuoteString(value.toStringRef()));
    } else if (PrintsCollapsed(*type_, N_, value)) {
      absl::StrAppend(&out, value.toIntList().front());
    } else {
      std::ostringstream os;
      os << value;
      out.append(os.str());
    }
  }
  return out;
}

bool operator==(const Argument& a, const Argument& b) {
  return a.name_ == b.name_ && a.type_->Equals(*b.type_) && a.N_ == b.N_ &&
         a.default_value_ == b.default_value_ && a.kwarg_only_ == b.kwarg_only_ &&
         a.alias_info_ == b.alias_info_;
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default: {
        const auto byte = static_cast<unsigned char>(ch);
        if (byte >= 0x20 && byte < 0x7f) {
          out.push_back(ch);
        } else {
          // Three octal digits, as PyTorch writes non-printable bytes.
          out.push_back('\\');
          out.push_back(static_cast<char>('0' + ((byte >> 6) & 7)));
          out.push_back(static_cast<char>('0' + ((byte >> 3) & 7)));
          out.push_back(static_cast<char>('0' + (byte & 7)));
        }
      }
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace opreg
