// DefaultValueParser: the part of the schema parser that reads argument defaults (numbers,
// complex numbers, strings, bools, None, lists, devices and enum identifiers). The type and
// argument grammar (schema_parser.cc) derives from it. Private to the schema parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opreg/core/device.h"
#include "opreg/core/ivalue.h"
#include "opreg/schema/type.h"
#include "schema_lexer.h"
#include "schema_parser_state.h"

namespace opreg::schema_internal {

class DefaultValueParser : public ParserState {
 protected:
  using ParserState::ParserState;

  // The default after `=` of an argument of type `real`, whose fake type is `fake`; `N` is the
  // size of a fixed-size list (`int[2] stride=1`). Throws SchemaSyntaxError.
  IValue ParseDefaultValue(const Type& real, const Type& fake, std::optional<int32_t> N);

 private:
  IValue ParseSingleConstant(TypeKind kind, const Type& real);
  double ParseDouble(const std::string& text, const Token& tok) const;
  IValue ParseConstantList(TypeKind kind, const Type& real_element);
  IValue ConvertToList(TypeKind kind, const std::vector<IValue>& values, const Token& at) const;
  Device ParseDeviceDefault();
  std::string ParseDeviceText();
  std::string DecodeStringLiteral(const Token& tok) const;
};

}  // namespace opreg::schema_internal
