// c10/util/Logging.h's CHECK, used where Catch2's CHECK is not defined (test_torch_compat_cpu
// includes Catch2, whose CHECK takes the name there).
#include <c10/util/Logging.h>

namespace opreg_test {

void TorchCompatCheck(bool condition) { CHECK(condition == true); }

}  // namespace opreg_test
