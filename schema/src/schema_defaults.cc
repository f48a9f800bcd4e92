// Default values in argument lists (`int x=1`, `float[2] s=[1., 2.]`, `Device d="cuda:0"`,
// `str m='mean'`, `ScalarType? t=float`): the literal grammar of DefaultValueParser, apart from
// the type and argument grammar in schema_parser.cc. Defaults are dispatched on the argument's
// fake type, as PyTorch's parseDefaultValue.
#include "schema_defaults.h"

#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "opreg/core/scalar_type.h"
#include "opreg/core/string_view.h"

namespace opreg::schema_internal {
namespace {

// Enum values PyTorch stores for identifier defaults (c10 ScalarType, Layout, Reduction,
// MemoryFormat). Only these identifiers (plus dtype names for ScalarType arguments) are legal.
struct IdentifierDefault {
  std::string_view name;
  int64_t value;
};
constexpr IdentifierDefault kIdentifierDefaults[] = {
    {"float", 6},              // at::kFloat
    {"complex", 9},            // at::kComplexFloat
    {"long", 4},               // at::kLong
    {"strided", 0},            // at::kStrided
    {"Mean", 1},               // at::Reduction::Mean
    {"contiguous_format", 0},  // c10::MemoryFormat::Contiguous
};

bool IsPossiblyOptional(const Type& type, TypeKind kind) {
  return type.kind() == kind ||
         (type.kind() == TypeKind::kOptional && type.element()->kind() == kind);
}

}  // namespace

IValue DefaultValueParser::ParseDefaultValue(const Type& real, const Type& fake,
                                             std::optional<int32_t> N) {
  switch (fake.kind()) {
    case TypeKind::kTensor:
    case TypeKind::kGenerator:
    case TypeKind::kQuantizer:
      if (NextIf(TokenKind::kNone)) return IValue();
      Fail(Cur(), absl::StrCat("the default of a ", real.str(), " argument can only be None"));
    case TypeKind::kOptional:
      if (fake.element()->kind() == TypeKind::kList && Cur().Is('[')) {
        // PyTorch cannot parse this either (its optional path reads one constant).
        Fail(Cur(), absl::StrCat("the default of an optional list argument (", real.str(),
                                 ") can only be None"));
      }
      return ParseSingleConstant(fake.kind(), real);
    case TypeKind::kStr:
    case TypeKind::kScalar:
    case TypeKind::kInt:
    case TypeKind::kBool:
    case TypeKind::kSymBool:
    case TypeKind::kFloat:
    case TypeKind::kSymFloat:
    case TypeKind::kComplex:
      return ParseSingleConstant(fake.kind(), real);
    case TypeKind::kDevice:
      return IValue(ParseDeviceDefault());
    case TypeKind::kList: {
      const Type& element = *fake.element();
      const Type& real_element = *real.element();
      if (Cur().kind == TokenKind::kNone || Cur().kind == TokenKind::kIdent) {
        Fail(Cur(), absl::StrCat("the default of a ", real.str(),
                                 " argument must be a list such as [] or [1, 2]; None needs "
                                 "an optional list type such as ",
                                 real.str(), "?"));
      }
      if (N && !Cur().Is('[')) {
        // `int[2] stride=1` means [1, 1].
        const Token& tok = Cur();
        IValue v = ParseSingleConstant(element.kind(), real_element);
        return ConvertToList(element.kind(), std::vector<IValue>(*N, v), tok);
      }
      return ParseConstantList(element.kind(), real_element);
    }
    default:
      Fail(Cur(),
           absl::StrCat("default values are not supported for arguments of type ", real.str()));
  }
}

IValue DefaultValueParser::ParseSingleConstant(TypeKind kind, const Type& real) {
  const Token& tok = Cur();
  switch (tok.kind) {
    case TokenKind::kTrue:
      Next();
      return IValue(true);
    case TokenKind::kFalse:
      Next();
      return IValue(false);
    case TokenKind::kNone:
      Next();
      return IValue();
    case TokenKind::kString:
      Next();
      return IValue(DecodeStringLiteral(tok));
    case TokenKind::kIdent: {
      if (IsPossiblyOptional(real, TypeKind::kDevice)) {
        // `Device? d=cuda:0` is how an optional Device default prints; read it back as the
        // string it was parsed from.
        return IValue(ParseDeviceText());
      }
      Next();
      for (const IdentifierDefault& d : kIdentifierDefaults) {
        if (d.name != tok.text) continue;
        // PyTorch stores an int even for a float argument (`float x=long`), which prints as
        // `4` and reads back as the double 4.; storing the argument's own kind keeps the
        // printed schema equal to the parsed one.
        if (kind == TypeKind::kFloat) return IValue(static_cast<double>(d.value));
        if (kind == TypeKind::kComplex) return IValue(std::complex<double>(d.value, 0));
        return IValue(d.value);
      }
      if (IsPossiblyOptional(real, TypeKind::kScalarType)) {
        if (std::optional<int64_t> code = TorchScalarTypeFromName(tok.text)) {
          return IValue(*code);
        }
      }
      Fail(tok, absl::StrCat("invalid numeric default value '", ToAbsl(tok.text), "'"));
    }
    default:
      break;
  }
  const bool negative = NextIfPunct('-');
  const Token& num = Cur();
  if (num.kind != TokenKind::kNumber) {
    Fail(num, ExpectedMessage(negative ? "a number after '-'" : "a default value"));
  }
  Next();
  const std::string text = absl::StrCat(negative ? "-" : "", ToAbsl(num.text));
  // `0.+1.j`: the form PyTorch prints complex defaults in. PyTorch cannot read it back;
  // accepting it here makes printed schemas parse again.
  if ((Cur().Is('+') || Cur().Is('-')) && Peek().kind == TokenKind::kNumber &&
      absl::EndsWith(ToAbsl(Peek().text), "j") && !absl::EndsWith(text, "j")) {
    const double sign = Next().Is('-') ? -1.0 : 1.0;
    const Token& imag = Next();
    return IValue(std::complex<double>(
        ParseDouble(text, num),
        sign * ParseDouble(std::string(imag.text.substr(0, imag.text.size() - 1)), imag)));
  }
  if (kind == TypeKind::kComplex || absl::EndsWith(text, "j")) {
    const bool imaginary = absl::EndsWith(text, "j");
    const double v = ParseDouble(text.substr(0, text.size() - (imaginary ? 1 : 0)), num);
    return IValue(imaginary ? std::complex<double>(0, v) : std::complex<double>(v, 0));
  }
  if (kind == TypeKind::kFloat || text.find_first_of(".eE") != std::string::npos) {
    return IValue(ParseDouble(text, num));
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) {
    Fail(num, absl::StrCat("integer default value ", text, " is out of range"));
  }
  return IValue(v);
}

double DefaultValueParser::ParseDouble(const std::string& text, const Token& tok) const {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || (errno == ERANGE && std::isinf(v))) {
    Fail(tok, absl::StrCat("floating-point default value ", text, " is out of range"));
  }
  return v;
}

IValue DefaultValueParser::ParseConstantList(TypeKind kind, const Type& real_element) {
  const Token& open = Cur();
  std::vector<IValue> values;
  ExpectPunct('[');
  if (!Cur().Is(']')) {
    do {
      values.push_back(ParseSingleConstant(kind, real_element));
    } while (NextIfPunct(','));
  }
  ExpectPunct(']');
  return ConvertToList(kind, values, open);
}

IValue DefaultValueParser::ConvertToList(TypeKind kind, const std::vector<IValue>& values,
                                         const Token& at) const {
  auto fail_element = [&](const IValue& v, std::string_view expected) {
    std::ostringstream os;
    os << v;
    Fail(at, absl::StrCat("list default: expected ", ToAbsl(expected), " elements but found ",
                          os.str()));
  };
  switch (kind) {
    case TypeKind::kComplex: {
      std::vector<std::complex<double>> out;
      for (const IValue& v : values) {
        if (v.isComplex()) {
          out.push_back(v.toComplex());
        } else if (v.isDouble() || v.isInt()) {
          out.emplace_back(v.isDouble() ? v.toDouble() : static_cast<double>(v.toInt()), 0);
        } else {
          fail_element(v, "complex");
        }
      }
      return IValue(std::move(out));
    }
    case TypeKind::kFloat: {
      std::vector<double> out;
      for (const IValue& v : values) {
        if (v.isDouble()) {
          out.push_back(v.toDouble());
        } else if (v.isInt()) {
          out.push_back(static_cast<double>(v.toInt()));
        } else {
          fail_element(v, "float");
        }
      }
      return IValue(std::move(out));
    }
    case TypeKind::kInt: {
      std::vector<int64_t> out;
      for (const IValue& v : values) {
        if (!v.isInt()) fail_element(v, "int");
        out.push_back(v.toInt());
      }
      return IValue(std::move(out));
    }
    case TypeKind::kBool: {
      std::vector<bool> out;
      for (const IValue& v : values) {
        if (!v.isBool()) fail_element(v, "bool");
        out.push_back(v.toBool());
      }
      return IValue(std::move(out));
    }
    default:
      Fail(at, "lists are only supported for float, int and complex types");
  }
}

// A Device default: a string literal ("cuda:0") as in PyTorch, or the unquoted form PyTorch
// prints (cuda:0), so that printed schemas read back.
Device DefaultValueParser::ParseDeviceDefault() {
  const Token& tok = Cur();
  std::string text;
  if (tok.kind == TokenKind::kString) {
    Next();
    text = DecodeStringLiteral(tok);
  } else if (tok.kind == TokenKind::kIdent) {
    text = ParseDeviceText();
  } else {
    Fail(tok, ExpectedMessage("a device string such as \"cuda:0\""));
  }
  absl::StatusOr<Device> device = Device::Parse(text);
  if (!device.ok()) Fail(tok, std::string(device.status().message()));
  return *device;
}

// `cpu`, `cuda`, `cuda:1`.
std::string DefaultValueParser::ParseDeviceText() {
  std::string text(Next().text);
  if (Cur().Is(':') && Peek().kind == TokenKind::kNumber) {
    Next();
    absl::StrAppend(&text, ":", ToAbsl(Next().text));
  }
  return text;
}

// The value of a string literal token: quotes removed, escapes decoded as PyTorch's
// parseStringLiteral does (plus `\r`).
std::string DefaultValueParser::DecodeStringLiteral(const Token& tok) const {
  const std::string_view t = tok.text;
  const size_t quote_len = t.size() >= 6 && t[1] == t[0] && t[2] == t[0] ? 3 : 1;
  const std::string_view body = t.substr(quote_len, t.size() - 2 * quote_len);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') {
      out.push_back(body[i]);
      continue;
    }
    const size_t at = tok.offset + quote_len + i;
    if (i + 1 >= body.size()) FailAt(at, "ill formed escape at the end of a string");
    const char c = body[++i];
    switch (c) {
      case '\\':
      case '\'':
      case '"':
      case '\n':
        out.push_back(c);
        break;
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case 'x':
        FailAt(at, "unsupported hex specifier");
      case 'u':
      case 'U':
        FailAt(at, "unsupported unicode specifier");
      default: {
        // `\ooo`: exactly three octal digits.
        int value = 0;
        for (size_t k = 0; k < 3; ++k) {
          const size_t j = i + k;
          if (j >= body.size() || body[j] < '0' || body[j] > '7') {
            FailAt(at, "ill formed octal specifier");
          }
          value = value * 8 + (body[j] - '0');
        }
        if (value > 255) FailAt(at, "ill formed octal specifier");
        out.push_back(static_cast<char>(value));
        i += 2;
      }
    }
  }
  return out;
}

}  // namespace opreg::schema_internal
