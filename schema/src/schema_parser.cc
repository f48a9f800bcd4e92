// Recursive-descent parser for the schema language, following c10's SchemaParser and
// SchemaTypeParser production by production so that it accepts what PyTorch accepts and builds
// the same model. Where PyTorch would crash or print something it cannot read back, this parser
// gives an error with a location instead (see the notes at each such place). The literals of
// default values are read in schema_defaults.cc, the token cursor is schema_parser_state.h.
#include "opreg/schema/schema_parser.h"

#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "opreg/core/string_util.h"
#include "opreg/core/string_view.h"
#include "schema_defaults.h"
#include "schema_lexer.h"

namespace opreg {
namespace {

using schema_internal::DefaultValueParser;
using schema_internal::SchemaSyntaxError;
using schema_internal::Token;
using schema_internal::TokenKind;

constexpr std::string_view kErrorPayloadUrl = "opreg.schema_parse_error";
// Containers nest at most this deep (`Tensor[][]...`): deeper types are refused rather than
// risking the stack in the recursive printer and destructors.
constexpr int kMaxTypeDepth = 32;
constexpr int32_t kMaxFixedListSize = 4096;

struct BaseTypeName {
  std::string_view name;
  TypeKind kind;
};
// PyTorch's parseBaseType table. Dimname reads as str, DeviceIndex and ConstQuantizerPtr as int:
// those spellings do not survive printing, as in PyTorch.
constexpr BaseTypeName kBaseTypes[] = {
    {"int", TypeKind::kInt},
    {"SymInt", TypeKind::kSymInt},
    {"float", TypeKind::kFloat},
    {"SymFloat", TypeKind::kSymFloat},
    {"complex", TypeKind::kComplex},
    {"bool", TypeKind::kBool},
    {"SymBool", TypeKind::kSymBool},
    {"str", TypeKind::kStr},
    {"Dimname", TypeKind::kStr},
    {"Scalar", TypeKind::kScalar},
    {"ScalarType", TypeKind::kScalarType},
    {"Layout", TypeKind::kLayout},
    {"MemoryFormat", TypeKind::kMemoryFormat},
    {"Device", TypeKind::kDevice},
    {"DeviceIndex", TypeKind::kInt},
    {"Stream", TypeKind::kStream},
    {"Generator", TypeKind::kGenerator},
    {"Storage", TypeKind::kStorage},
    {"QScheme", TypeKind::kQScheme},
    {"Quantizer", TypeKind::kQuantizer},
    {"ConstQuantizerPtr", TypeKind::kInt},
    {"Capsule", TypeKind::kCapsule},
    {"Any", TypeKind::kAny},
    {"AnyClassType", TypeKind::kAnyClass},
    {"AnyEnumType", TypeKind::kAnyEnum},
    {"NoneType", TypeKind::kNone},
};

struct TypeAndAlias {
  TypePtr type;
  std::optional<AliasInfo> alias;
};

// The type, argument and return grammar; defaults are read by DefaultValueParser
// (schema_defaults.cc) and tokens through its ParserState.
class Parser : public DefaultValueParser {
 public:
  Parser(std::string_view source, const SchemaParseOptions& options)
      : DefaultValueParser(source), allow_typevars_(options.allow_typevars) {}

  std::variant<OperatorName, FunctionSchema> ParseDeclaration() {
    OperatorName name = ParseName();
    if (!Cur().Is('(')) {
      ExpectEnd();
      return name;
    }
    if (absl::StartsWith(name.name, "aten::") || absl::StartsWith(name.name, "prim::")) {
      allow_typevars_ = true;
    }

    std::vector<Argument> arguments;
    std::vector<size_t> argument_offsets;
    bool kwarg_only = false;
    bool is_vararg = false;
    ParseList('(', ')', "argument list", [&] {
      if (is_vararg) Fail(Cur(), "... must be the last element of the argument list");
      const Token& tok = Cur();
      if (NextIfPunct('*')) {
        if (kwarg_only) Fail(tok, "'*' may appear only once in an argument list");
        kwarg_only = true;
      } else if (NextIf(TokenKind::kDots)) {
        is_vararg = true;
      } else {
        argument_offsets.push_back(tok.offset);
        arguments.push_back(ParseArgument(/*is_return=*/false, kwarg_only));
      }
    });
    CheckArguments(arguments, argument_offsets, is_vararg);

    if (!NextIf(TokenKind::kArrow)) Fail(Cur(), ExpectedMessage("'->'"));
    std::vector<Argument> returns;
    bool is_varret = false;
    if (NextIf(TokenKind::kDots)) {
      is_varret = true;
    } else if (Cur().Is('(')) {
      ParseList('(', ')', "return list", [&] {
        if (is_varret) Fail(Cur(), "... must be the last element of the return list");
        if (NextIf(TokenKind::kDots)) {
          is_varret = true;
        } else {
          returns.push_back(ParseArgument(/*is_return=*/true, /*kwarg_only=*/false));
        }
      });
    } else {
      returns.push_back(ParseArgument(/*is_return=*/true, /*kwarg_only=*/false));
    }
    ExpectEnd();
    return FunctionSchema(std::move(name), std::move(arguments), std::move(returns), is_vararg,
                          is_varret);
  }

 private:
  // ---- Names ----
  OperatorName ParseName() {
    std::string name(ExpectName("an operator name"));
    if (NextIfPunct(':')) {
      ExpectPunct(':');
      absl::StrAppend(&name, "::", ToAbsl(ExpectName("an operator name")));
    }
    std::string overload;
    if (NextIfPunct('.')) {
      const Token& tok = Cur();
      overload = std::string(ExpectName("an overload name"));
      // `default` is an attribute of every op packet in Python (op.default) and `__x` names
      // would shadow Python internals.
      if (overload == "default" || absl::StartsWith(overload, "__")) {
        Fail(tok, absl::StrCat(overload, " is not a legal overload name for aten operators"));
      }
    }
    return OperatorName(std::move(name), std::move(overload));
  }

  // ---- Arguments ----
  Argument ParseArgument(bool is_return, bool kwarg_only) {
    TypeAndAlias ta = ParseType(0);
    TypePtr type = std::move(ta.type);
    std::optional<AliasInfo> alias = std::move(ta.alias);
    std::optional<int32_t> N;
    if (NextIfPunct('[')) {
      // A fixed-size list (`int[2]`): only at argument level, as in PyTorch.
      const Token& size_tok = Cur();
      int32_t size = 0;
      if (size_tok.kind != TokenKind::kNumber ||
          !std::all_of(size_tok.text.begin(), size_tok.text.end(), absl::ascii_isdigit) ||
          !absl::SimpleAtoi(ToAbsl(size_tok.text), &size)) {
        Fail(size_tok, ExpectedMessage("a list size (a non-negative integer) or ']'"));
      }
      // Fixed-size lists are small (`int[2]`, `bool[3]`); a huge N would make a scalar default
      // expand into a huge list.
      if (size > kMaxFixedListSize) {
        Fail(size_tok,
             StrCat("list size ", size, " is too large (at most ", kMaxFixedListSize, ")"));
      }
      Next();
      N = size;
      ExpectPunct(']');
      type = Type::List(std::move(type));
      alias = WrapInContainer(std::move(alias), ParseAliasAnnotation());
      if (NextIfPunct('?')) type = Type::Optional(std::move(type));
    }

    std::string name;
    std::optional<IValue> default_value;
    if (is_return) {
      if (Cur().kind == TokenKind::kIdent) name = std::string(Next().text);
    } else {
      if (Cur().Is('(') && type->kind() == TypeKind::kOptional) {
        Fail(Cur(), "an alias annotation must come before '?': write Tensor(a!)?, not Tensor?(a!)");
      }
      name = std::string(ExpectName("an argument name"));
      if (NextIfPunct('=')) {
        default_value = ParseDefaultValue(*type, *type->FakeType(type), N);
      }
    }
    return Argument(std::move(name), std::move(type), N, std::move(default_value),
                    !is_return && kwarg_only, std::move(alias));
  }

  // PyTorch's checks after the argument list: no defaults with `...`, and no positional
  // argument without a default after one with a default (lists and keyword-only arguments are
  // exempt, as there).
  void CheckArguments(const std::vector<Argument>& arguments, const std::vector<size_t>& offsets,
                      bool is_vararg) const {
    bool seen_default = false;
    for (size_t i = 0; i < arguments.size(); ++i) {
      const Argument& a = arguments[i];
      if (a.default_value()) {
        if (is_vararg)
          FailAt(offsets[i], "schemas with vararg (...) can't have default value args");
        seen_default = true;
      } else if (seen_default && !a.kwarg_only() && a.fake_type()->kind() != TypeKind::kList) {
        FailAt(offsets[i], absl::StrCat("Non-default positional argument follows default argument "
                                        "(parameter '",
                                        a.name(), "')"));
      }
    }
  }

  // ---- Types ----
  // Moves an element annotation into the annotation of the list that now contains it. As in
  // PyTorch's 2025 parser, a list of written elements is itself written.
  static std::optional<AliasInfo> WrapInContainer(std::optional<AliasInfo> element,
                                                  std::optional<AliasInfo> container) {
    if (!element) return container;
    if (!container) {
      container.emplace();
      container->set_is_write(element->is_write());
    }
    container->AddContained(std::move(*element));
    return container;
  }

  TypeAndAlias ParseType(int depth) {
    if (depth > kMaxTypeDepth) Fail(Cur(), "type is nested too deeply");
    TypeAndAlias result;
    const Token& tok = Cur();
    const std::string_view text = tok.kind == TokenKind::kIdent ? tok.text : std::string_view();
    if (tok.Is('(')) {
      // Tuple. Element annotations are dropped, as in PyTorch.
      std::vector<TypePtr> elements;
      ParseList('(', ')', "tuple type", [&] { elements.push_back(ParseType(depth + 1).type); });
      result.type = Type::Tuple(std::move(elements));
    } else if (text == "Future" || text == "Await" || text == "RRef") {
      Next();
      ExpectPunct('(');
      TypePtr element = ParseType(depth + 1).type;
      ExpectPunct(')');
      result.type = text == "Future"  ? Type::Future(std::move(element))
                    : text == "Await" ? Type::Await(std::move(element))
                                      : Type::RRef(std::move(element));
    } else if (text == "Tensor") {
      Next();
      result.type = Type::Get(TypeKind::kTensor);
      result.alias = ParseAliasAnnotation();
    } else if (text == "Dict") {
      Next();
      ExpectPunct('(');
      TypePtr key = ParseType(depth + 1).type;
      ExpectPunct(',');
      TypePtr value = ParseType(depth + 1).type;
      ExpectPunct(')');
      result.type = Type::Dict(std::move(key), std::move(value));
      result.alias = ParseAliasAnnotation();
    } else if (text == "Union") {
      Next();
      std::vector<TypePtr> members;
      ParseList('(', ')', "Union type", [&] { members.push_back(ParseType(depth + 1).type); });
      result.type = Type::Union(std::move(members));
      result.alias = ParseAliasAnnotation();
    } else {
      result.type = ParseBaseType();
      result.alias = ParseAliasAnnotation();
    }
    while (true) {
      if (Cur().Is('[') && Peek().Is(']')) {
        if (++depth > kMaxTypeDepth) Fail(Cur(), "type is nested too deeply");
        Next();
        Next();
        result.type = Type::List(std::move(result.type));
        result.alias = WrapInContainer(std::move(result.alias), ParseAliasAnnotation());
      } else if (Cur().Is('?')) {
        if (++depth > kMaxTypeDepth) Fail(Cur(), "type is nested too deeply");
        Next();
        result.type = Type::Optional(std::move(result.type));
      } else {
        break;
      }
    }
    return result;
  }

  TypePtr ParseBaseType() {
    const Token& tok = Cur();
    if (NextIf(TokenKind::kNone)) return Type::Get(TypeKind::kNone);
    if (tok.kind != TokenKind::kIdent) Fail(tok, ExpectedMessage("a type"));
    Next();
    // A dotted name (`__torch__.torch.classes.c10d.ProcessGroup`, `mylib.Handle`) names a
    // custom class; whether it is registered is the registry's business.
    if (Cur().Is('.') && Peek().kind == TokenKind::kIdent) {
      std::string qualified(tok.text);
      while (Cur().Is('.') && Peek().kind == TokenKind::kIdent) {
        Next();
        absl::StrAppend(&qualified, ".", ToAbsl(Next().text));
      }
      return Type::Class(std::move(qualified));
    }
    for (const BaseTypeName& t : kBaseTypes) {
      if (t.name == tok.text) return Type::Get(t.kind);
    }
    if (tok.text == "double") {
      Fail(tok,
           "Use `float` instead of `double` in an operator's schema string. `float` in schema "
           "corresponds to the double type in C++");
    }
    if (tok.text == "int64_t") {
      Fail(tok,
           "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. `SymInt` "
           "corresponds to c10::SymInt in C++ while `int` in schema corresponds to the int64_t "
           "type in C++.");
    }
    if (allow_typevars_ && absl::ascii_islower(tok.text[0]))
      return Type::Var(std::string(tok.text));
    Fail(tok, absl::StrCat("unknown type specifier '", ToAbsl(tok.text),
                           "'. Common valid schema types include Tensor, SymInt, int, float, "
                           "bool, Scalar"));
  }

  // `(a)`, `(a!)`, `(a|b -> c)`, `(*)` or the shorthand `!` (a fresh set, written).
  std::optional<AliasInfo> ParseAliasAnnotation() {
    AliasInfo info;
    if (NextIfPunct('(')) {
      ParseAliasSets([&](std::string s) { info.AddBeforeSet(std::move(s)); },
                     [&] { return info.IsWildcardBefore(); });
      if (NextIfPunct('!')) info.set_is_write(true);
      if (NextIf(TokenKind::kArrow)) {
        ParseAliasSets([&](std::string s) { info.AddAfterSet(std::move(s)); },
                       [&] { return info.IsWildcardAfter(); });
      } else {
        for (const std::string& s : info.before_sets()) info.AddAfterSet(s);
      }
      ExpectPunct(')');
      return info;
    }
    if (NextIfPunct('!')) {
      info.AddBeforeSet(
          absl::StrCat(std::string(1, AliasInfo::kFreshSetPrefix), next_fresh_set_++));
      info.set_is_write(true);
      return info;
    }
    return std::nullopt;
  }

  // `set {| set}`; names after a wildcard are ignored, as in PyTorch.
  template <typename Add, typename Wildcard>
  void ParseAliasSets(Add add, Wildcard has_wildcard) {
    do {
      if (NextIfPunct('*')) {
        add(std::string(AliasInfo::kWildcard));
      } else {
        std::string name(ExpectName("an alias set name"));
        if (!has_wildcard()) add(std::move(name));
      }
    } while (NextIfPunct('|'));
  }

  bool allow_typevars_;
  int next_fresh_set_ = 0;
};

// 1-based line and column of a byte offset.
std::pair<int, int> LineAndColumn(std::string_view source, size_t offset) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

// The source line holding `offset`, with a caret under it. Long lines are cut to a window.
std::string Excerpt(std::string_view source, size_t offset) {
  offset = std::min(offset, source.size());
  size_t begin = offset;
  while (begin > 0 && source[begin - 1] != '\n') --begin;
  size_t end = source.find('\n', offset);
  if (end == std::string_view::npos) end = source.size();
  constexpr size_t kBefore = 60, kWidth = 100;
  const size_t from = offset - begin > kBefore ? offset - kBefore : begin;
  const size_t to = std::min(end, from + kWidth);
  std::string line = absl::StrCat(from > begin ? "..." : "", ToAbsl(source.substr(from, to - from)),
                                  to < end ? "..." : "");
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\t' || c == '\r'; }, ' ');
  const size_t caret = (from > begin ? 3 : 0) + (offset - from);
  return absl::StrCat("  ", line, "\n  ", std::string(caret, ' '), "^");
}

absl::Status MakeError(std::string_view source, const SchemaSyntaxError& e) {
  const auto [line, column] = LineAndColumn(source, e.offset);
  absl::Status status = absl::InvalidArgumentError(absl::StrCat(
      e.message, " (line ", line, ", column ", column, ")\n", Excerpt(source, e.offset)));
  status.SetPayload(ToAbsl(kErrorPayloadUrl),
                    absl::Cord(absl::StrCat(line, ":", column, ":", e.message)));
  return status;
}

}  // namespace

absl::StatusOr<std::variant<OperatorName, FunctionSchema>> ParseSchemaOrName(
    std::string_view text, const SchemaParseOptions& options) {
  try {
    return Parser(text, options).ParseDeclaration();
  } catch (const SchemaSyntaxError& e) {
    return MakeError(text, e);
  }
}

absl::StatusOr<FunctionSchema> ParseSchema(std::string_view text,
                                           const SchemaParseOptions& options) {
  absl::StatusOr<std::variant<OperatorName, FunctionSchema>> parsed =
      ParseSchemaOrName(text, options);
  if (!parsed.ok()) return parsed.status();
  if (auto* schema = std::get_if<FunctionSchema>(&*parsed)) return std::move(*schema);
  return MakeError(text, SchemaSyntaxError{text.size(),
                                           "Tried to parse a function schema but only the "
                                           "operator name was given"});
}

std::optional<SchemaParseError> GetSchemaParseError(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(ToAbsl(kErrorPayloadUrl));
  if (!payload) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(std::string(*payload), absl::MaxSplits(':', 2));
  SchemaParseError error;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &error.line) ||
      !absl::SimpleAtoi(parts[1], &error.column)) {
    return std::nullopt;
  }
  error.message = std::move(parts[2]);
  return error;
}

}  // namespace opreg