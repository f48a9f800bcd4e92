#include "opreg/schema/alias_info.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace opreg {
namespace {

void AddUnique(std::vector<std::string>& sets, std::string set) {
  if (std::find(sets.begin(), sets.end(), set) == sets.end()) sets.push_back(std::move(set));
}

bool HasWildcard(const std::vector<std::string>& sets) {
  return std::find(sets.begin(), sets.end(), AliasInfo::kWildcard) != sets.end();
}

// Set equality regardless of order (PyTorch compares unordered sets).
bool SameSets(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  return std::all_of(a.begin(), a.end(), [&](const std::string& s) {
    return std::find(b.begin(), b.end(), s) != b.end();
  });
}

}  // namespace

void AliasInfo::AddBeforeSet(std::string set) { AddUnique(before_sets_, std::move(set)); }
void AliasInfo::AddAfterSet(std::string set) { AddUnique(after_sets_, std::move(set)); }

bool AliasInfo::IsWildcardBefore() const { return HasWildcard(before_sets_); }
bool AliasInfo::IsWildcardAfter() const { return HasWildcard(after_sets_); }

bool AliasInfo::IsFreshShorthand() const {
  return is_write_ && before_sets_.size() == 1 && !before_sets_[0].empty() &&
         before_sets_[0][0] == kFreshSetPrefix && after_sets_.empty();
}

std::string AliasInfo::str() const {
  if (IsFreshShorthand()) return "!";
  std::string out = absl::StrCat("(", absl::StrJoin(before_sets_, "|"), is_write_ ? "!" : "");
  if (!SameSets(before_sets_, after_sets_)) {
    absl::StrAppend(&out, " -> ", absl::StrJoin(after_sets_, "|"));
  }
  out.push_back(')');
  return out;
}

bool operator==(const AliasInfo& a, const AliasInfo& b) {
  // Fresh sets (`!`) are anonymous: their numbers depend only on how many came before in one
  // parse, so two of them are equal whatever their numbers.
  if (a.IsFreshShorthand() && b.IsFreshShorthand()) return a.contained_ == b.contained_;
  return a.is_write_ == b.is_write_ && SameSets(a.before_sets_, b.before_sets_) &&
         SameSets(a.after_sets_, b.after_sets_) && a.contained_ == b.contained_;
}

}  // namespace opreg
