// The public face of the mykernels library. Ops are reached through the opreg dispatcher
// (`mykernels::scale`, ...); this header only exports a symbol that executables call, so that
// linking the library is never optimized away and its OPREG_LIBRARY blocks run at load time.
#pragma once

namespace mykernels {

// "mykernels": the op namespace this library registers.
const char* LibraryName();

}  // namespace mykernels
