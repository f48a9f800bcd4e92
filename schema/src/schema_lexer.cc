#include "schema_lexer.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "opreg/core/string_view.h"

namespace opreg::schema_internal {
namespace {

// TorchScript keywords: the lexer never yields them as identifiers, so they cannot name an
// argument or an operator. (`from` is not one: `uniform_(..., float from=0)` is legal.)
constexpr std::array<std::string_view, 24> kKeywords = {
    "if",  "else",   "elif",  "while",  "return", "is",     "and",   "or",
    "not", "global", "for",   "in",     "raise",  "assert", "break", "continue",
    "del", "pass",   "class", "import", "with",   "as",     "def",   "Ellipsis"};

bool IsIdentStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool IsIdentChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

TokenKind IdentKind(std::string_view text) {
  if (text == "True") return TokenKind::kTrue;
  if (text == "False") return TokenKind::kFalse;
  if (text == "None") return TokenKind::kNone;
  for (std::string_view k : kKeywords) {
    if (k == text) return TokenKind::kKeyword;
  }
  return TokenKind::kIdent;
}

// Length of the number starting at `pos`, or 0. Like TorchScript's lexer, which takes what
// strtod consumes from a position that is not a sign or a letter: digits with an optional
// fraction and exponent (`1`, `1.`, `.5`, `1e-05`), plus an optional `j` (imaginary).
size_t NumberLength(std::string_view s, size_t pos) {
  size_t i = pos;
  size_t digits = 0;
  while (i < s.size() && absl::ascii_isdigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    // `...` is never a number; `1.` is.
    size_t j = i + 1;
    size_t frac = 0;
    while (j < s.size() && absl::ascii_isdigit(s[j])) ++j, ++frac;
    if (digits + frac > 0) {
      i = j;
      digits += frac;
    }
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t exp_digits = 0;
    while (j < s.size() && absl::ascii_isdigit(s[j])) ++j, ++exp_digits;
    if (exp_digits > 0) i = j;
  }
  if (i < s.size() && s[i] == 'j') ++i;
  return i - pos;
}

// Length of the string literal starting at `pos` (a quote), including its quotes. Handles
// triple quotes and backslash escapes; a single-quoted string may not span lines.
size_t StringLength(std::string_view s, size_t pos) {
  const char quote = s[pos];
  const bool triple = s.substr(pos, 3) == std::string(3, quote);
  size_t i = pos + (triple ? 3 : 1);
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (!triple && c == '\n') break;
    if (c == quote && (!triple || s.substr(i, 3) == std::string(3, quote))) {
      return i + (triple ? 3 : 1) - pos;
    }
    ++i;
  }
  throw SchemaSyntaxError{pos, "unterminated string literal"};
}

}  // namespace

std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> tokens;
  tokens.reserve(s.size() / 3 + 2);
  size_t i = 0;
  while (true) {
    while (i < s.size() && absl::ascii_isspace(s[i])) ++i;
    if (i >= s.size()) break;
    const char c = s[i];
    if (IsIdentStart(c)) {
      size_t j = i + 1;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      std::string_view text = s.substr(i, j - i);
      tokens.push_back({IdentKind(text), text, i});
      i = j;
    } else if (size_t n = NumberLength(s, i); n > 0) {
      tokens.push_back({TokenKind::kNumber, s.substr(i, n), i});
      i += n;
    } else if (c == '"' || c == '\'') {
      const size_t n = StringLength(s, i);
      tokens.push_back({TokenKind::kString, s.substr(i, n), i});
      i += n;
    } else if (s.substr(i, 2) == "->") {
      tokens.push_back({TokenKind::kArrow, s.substr(i, 2), i});
      i += 2;
    } else if (s.substr(i, 3) == "...") {
      tokens.push_back({TokenKind::kDots, s.substr(i, 3), i});
      i += 3;
    } else if (std::string_view("()[],*?!|:.=-+").find(c) != std::string_view::npos) {
      tokens.push_back({TokenKind::kPunct, s.substr(i, 1), i});
      ++i;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      throw SchemaSyntaxError{
          i, byte >= 0x20 && byte < 0x7f
                 ? absl::StrCat("unexpected character '", std::string(1, c), "'")
                 : absl::StrCat("unexpected byte 0x", absl::Hex(byte, absl::kZeroPad2))};
    }
  }
  tokens.push_back({TokenKind::kEnd, s.substr(s.size()), s.size()});
  return tokens;
}

std::string Describe(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of input";
  std::string_view text = token.text;
  if (text.size() > 40) return absl::StrCat("'", ToAbsl(text.substr(0, 37)), "...'");
  return absl::StrCat("'", ToAbsl(text), "'");
}

}  // namespace opreg::schema_internal
