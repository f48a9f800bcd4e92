// ParserState: the token cursor the schema parser's productions share (the tokens, the position
// in them, and the helpers that read tokens and report syntax errors with a location). Private
// to the schema parser (schema_parser.cc, schema_defaults.cc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "opreg/core/string_view.h"
#include "schema_lexer.h"

namespace opreg::schema_internal {

class ParserState {
 protected:
  explicit ParserState(std::string_view source) : tokens_(Tokenize(source)) {}

  // ---- Token helpers ----
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek() const { return tokens_[std::min(pos_ + 1, tokens_.size() - 1)]; }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::kEnd) ++pos_;
    return t;
  }
  bool NextIf(TokenKind kind) {
    if (Cur().kind != kind) return false;
    Next();
    return true;
  }
  bool NextIfPunct(char c) {
    if (!Cur().Is(c)) return false;
    Next();
    return true;
  }

  [[noreturn]] void Fail(const Token& at, std::string message) const {
    throw SchemaSyntaxError{at.offset, std::move(message)};
  }
  [[noreturn]] void FailAt(size_t offset, std::string message) const {
    throw SchemaSyntaxError{offset, std::move(message)};
  }
  std::string ExpectedMessage(std::string_view what) const {
    return absl::StrCat("expected ", ToAbsl(what), " but found ", Describe(Cur()));
  }
  void ExpectPunct(char c) {
    if (!NextIfPunct(c)) Fail(Cur(), ExpectedMessage(absl::StrCat("'", std::string(1, c), "'")));
  }
  void ExpectEnd() {
    if (Cur().kind != TokenKind::kEnd) Fail(Cur(), ExpectedMessage("end of schema"));
  }
  // An identifier used as a name (of an operator, overload, argument or alias set).
  std::string_view ExpectName(std::string_view what) {
    const Token& tok = Cur();
    if (tok.kind == TokenKind::kIdent) return Next().text;
    if (tok.kind == TokenKind::kKeyword || tok.kind == TokenKind::kTrue ||
        tok.kind == TokenKind::kFalse || tok.kind == TokenKind::kNone) {
      Fail(tok, absl::StrCat("'", ToAbsl(tok.text), "' is a keyword and cannot be used as ",
                             ToAbsl(what)));
    }
    Fail(tok, ExpectedMessage(what));
  }

  // `open item {, item} close` or `open close`, as PyTorch's parseList; a trailing comma is an
  // error, as there.
  template <typename F>
  void ParseList(char open, char close, std::string_view what, F&& item) {
    ExpectPunct(open);
    if (!Cur().Is(close)) {
      do {
        if (Cur().Is(close)) {
          Fail(Cur(),
               absl::StrCat("trailing comma in ", ToAbsl(what), ": expected an element after ','"));
        }
        item();
      } while (NextIfPunct(','));
    }
    if (!Cur().Is(close)) {
      Fail(Cur(),
           ExpectedMessage(absl::StrCat("',' or '", std::string(1, close), "' in ", ToAbsl(what))));
    }
    Next();
  }

 private:
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace opreg::schema_internal
