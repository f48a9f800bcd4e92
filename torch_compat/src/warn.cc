// TORCH_WARN's sink: opreg's logger, with the call site.
#include "opreg/core/logging.h"
#include "opreg/torch_compat/macros.h"

namespace c10::detail {

void Warn(const std::string& message, const char* file, int line) {
  ::opreg::Logger().warn("{} ({}:{})", message, file, line);
}

}  // namespace c10::detail
