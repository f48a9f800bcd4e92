// GroupRegistry<G>: the process-wide table of named symmetric-memory groups, one per backend
// (host `Group`, `cuda::CudaGroup`), so that every backend looks groups up, lists the known
// names and reports a missing or duplicate name the same way.
//
// Errors: Insert throws kValue when the name is taken, Get throws kKey naming the known groups,
// Remove throws kValue when there is no such group.
// Ownership: the registry holds one shared_ptr per group until Remove hands it back.
// Thread safety: every member may be called from any thread (one internal mutex, never held
// while a group is destroyed: Remove hands the last reference back to the caller).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "opreg/core/error.h"
#include "opreg/core/string_util.h"

namespace opreg::symm_mem {

template <class G>
class GroupRegistry {
 public:
  // `backend` prefixes errors ("symm_mem", "symm_mem (cuda)"); `noun` names a group in them
  // ("group", "CUDA group"); `create` is the function that makes one ("symm_mem::Group::Create").
  GroupRegistry(std::string backend, std::string noun, std::string create)
      : backend_(std::move(backend)), noun_(std::move(noun)), create_(std::move(create)) {}
  GroupRegistry(const GroupRegistry&) = delete;
  GroupRegistry& operator=(const GroupRegistry&) = delete;

  // Throws kValue unless `name` is free. Useful before the expensive part of a Create.
  void CheckFree(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mu_);
    CheckFreeLocked(name);
  }

  // Registers `group` under `name`; kValue if the name was taken meanwhile.
  void Insert(const std::string& name, std::shared_ptr<G> group) {
    std::lock_guard<std::mutex> lock(mu_);
    CheckFreeLocked(name);
    groups_.emplace(name, std::move(group));
  }

  // The group `name`; kKey naming the known groups when there is none.
  std::shared_ptr<G> Get(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = groups_.find(name);
    if (it == groups_.end()) {
      std::string known;
      for (const auto& entry : groups_) {
        StrAppend(&known, known.empty() ? "'" : ", '", entry.first, "'");
      }
      OPREG_THROW(kKey, backend_, ": no ", noun_, " named '", name,
                  "' in this process (known: ", known.empty() ? "none" : known,
                  "); create it with ", create_);
    }
    return it->second;
  }

  bool Exists(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mu_);
    return groups_.find(name) != groups_.end();
  }

  // Unregisters `name` and returns its group (destroyed by the caller, outside the lock); kValue
  // naming `api` when there is no such group.
  std::shared_ptr<G> Remove(std::string_view name, std::string_view api) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = groups_.find(name);
    OPREG_CHECK_VALUE(it != groups_.end(), api, ": no ", noun_, " named '", name, "'");
    std::shared_ptr<G> group = std::move(it->second);
    groups_.erase(it);
    return group;
  }

 private:
  void CheckFreeLocked(std::string_view name) const {
    OPREG_CHECK_VALUE(groups_.find(name) == groups_.end(), create_, ": ", noun_, " '", name,
                      "' already exists in this process");
  }

  const std::string backend_, noun_, create_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<G>, std::less<>> groups_;
};

}  // namespace opreg::symm_mem
