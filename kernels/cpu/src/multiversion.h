// Internal: runtime ISA dispatch for the kernels' hot loops.
//
// The library is compiled for the toolchain's baseline ISA (x86-64: SSE2) so that binaries and
// wheels run on any CPU of the architecture, but the memory-bound kernels need wider vectors
// (and AVX2's variable shifts and blends for the branch-free f16/bf16/fp8 conversions) to keep
// up with memory. OPREG_CPU_MULTIVERSION on a function makes GCC compile it three times
// (x86-64-v4: AVX-512; x86-64-v3: AVX2, FMA, F16C; and the baseline) and pick one through an
// ifunc resolver when the library is loaded, so a call costs one indirect jump.
//
// Put it on the per-row / per-chunk loop functions that OpenMP regions call, not on functions
// containing `#pragma omp parallel` (the outlined parallel body would not be cloned), and keep
// the callees plain inline functions without target attributes: a clone inlines a callee only
// if the callee's ISA is a subset of the clone's (the "arch=x86-64-vN" levels keep the
// baseline's scheduling model, so the baseline inline helpers qualify).
//
// Expands to nothing (the baseline build only) where this cannot work: other architectures,
// Clang (which rejects multiversioned function templates), libcs without ifunc, and builds with
// OPREG_CPU_ARCH set, whose explicit -march already fixes the ISA.
#pragma once

#include <cstdint>  // Defines __GLIBC__ (through <features.h>) on glibc.

#if defined(__has_attribute)
#if __has_attribute(target_clones) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__) && defined(__GLIBC__) && !defined(OPREG_CPU_NO_MULTIVERSION)
#define OPREG_CPU_MULTIVERSION \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif

#ifndef OPREG_CPU_MULTIVERSION
#define OPREG_CPU_MULTIVERSION
#endif

// For a large loop helper that a multiversioned function calls: GCC's inliner may otherwise keep
// it out of line, compiled once for the baseline ISA, and the clone then runs baseline code.
#if defined(__GNUC__)
#define OPREG_CPU_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define OPREG_CPU_ALWAYS_INLINE inline
#endif
