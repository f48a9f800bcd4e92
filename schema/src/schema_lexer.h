// Tokenizer for the schema language: the subset of TorchScript's lexer the schema grammar
// uses. Internal to the registry.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace opreg::schema_internal {

enum class TokenKind : unsigned char {
  kEnd,
  kIdent,
  kKeyword,  // a TorchScript keyword other than True/False/None: never a name
  kTrue,
  kFalse,
  kNone,
  kNumber,
  kString,
  kArrow,  // ->
  kDots,   // ...
  kPunct,  // one of ( ) [ ] , * ? ! | : . = - +
};

struct Token {
  TokenKind kind;
  std::string_view text;  // a view into the source
  size_t offset;          // byte offset in the source

  bool Is(char punct) const {
    return kind == TokenKind::kPunct && text.size() == 1 && text[0] == punct;
  }
};

// Thrown by the lexer and the parser; turned into an absl::Status at the API boundary.
struct SchemaSyntaxError {
  size_t offset;
  std::string message;
};

// Splits `source` into tokens, ending with one kEnd token. Whitespace, newlines included, is
// insignificant. Throws SchemaSyntaxError on a character that starts no token or an
// unterminated string.
std::vector<Token> Tokenize(std::string_view source);

// How a token is named in error messages: `'x'`, `end of input`.
std::string Describe(const Token& token);

}  // namespace opreg::schema_internal
