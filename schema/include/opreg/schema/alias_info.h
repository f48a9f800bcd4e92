// Alias annotations of schema arguments and returns: `Tensor(a)`, `Tensor(a!)`,
// `Tensor(a -> *)`, `Tensor(a|b)`, `Tensor!` (a fresh set, written), and the annotations of list
// elements (`Tensor(a!)[]`) kept in `contained`.
//
// Value type; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace opreg {

class AliasInfo {
 public:
  // The wildcard set `*`: "may alias anything".
  static constexpr std::string_view kWildcard = "*";
  // Sets created by the `!` shorthand are named `$0`, `$1`, ... (per parse), like PyTorch's.
  static constexpr char kFreshSetPrefix = '$';

  // Adds a set in source order; duplicates are dropped (PyTorch keeps sets in a hash set).
  void AddBeforeSet(std::string set);
  void AddAfterSet(std::string set);
  void set_is_write(bool w) { is_write_ = w; }
  void AddContained(AliasInfo info) { contained_.push_back(std::move(info)); }

  const std::vector<std::string>& before_sets() const { return before_sets_; }
  const std::vector<std::string>& after_sets() const { return after_sets_; }
  bool is_write() const { return is_write_; }
  // Annotations of contained types (the element of a list).
  const std::vector<AliasInfo>& contained() const { return contained_; }

  bool IsWildcardBefore() const;
  bool IsWildcardAfter() const;
  // True for the annotation written as a bare `!`.
  bool IsFreshShorthand() const;

  // The annotation as written after a type: `(a)`, `(a!)`, `(a -> *)`, `(a|b!)`, or `!` for the
  // shorthand (so that the printed schema parses again). Contained annotations are not printed.
  std::string str() const;

  friend bool operator==(const AliasInfo& a, const AliasInfo& b);
  friend bool operator!=(const AliasInfo& a, const AliasInfo& b) { return !(a == b); }

 private:
  std::vector<std::string> before_sets_;
  std::vector<std::string> after_sets_;
  bool is_write_ = false;
  std::vector<AliasInfo> contained_;
};

}  // namespace opreg
