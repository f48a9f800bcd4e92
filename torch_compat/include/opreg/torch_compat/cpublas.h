// opreg::torch_compat: libtorch's CPU BLAS entry points that kernel libraries call
// (ATen/native/CPUBlas.h): the batch-reduce GEMM micro-kernel `brgemm` with its VNNI layouts,
// `brgemm_release`, `could_pack` / `pack`, and the column-major `gemm` dispatch stubs.
//
// opreg has no oneDNN: brgemm computes with plain loops (float or int32 accumulation, as
// oneDNN's does), and could_pack answers false, so kernels that ask it take their own packing
// path, as with a libtorch built without oneDNN. Errors: `pack` is NotImplementedError (only
// called after could_pack says yes). Thread safety: every function may be called from many
// threads on disjoint outputs.
#pragma once

#include <cstdint>

#include "opreg/torch_compat/device.h"
#include "opreg/torch_compat/scalar_type.h"
#include "opreg/torch_compat/tensor.h"

namespace at::native {

enum class TransposeType { NoTranspose, Transpose, ConjTranspose };

namespace cpublas {

// C[M, N] (row-major, ld_c) = (add_C ? C : 0) + A[M, K] (row-major, ld_a) x B[K, N]. With
// is_vnni, B is in VNNI layout: pairs (16-bit types) or quads (8-bit types) of consecutive k
// interleaved, element (k, n) at B[(k / v) * ld_b * v + n * v + k % v]; else row-major with
// ld_b. K must be a multiple of the VNNI group there.
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const c10::Half* A, const c10::Half* B, float* C, bool is_vnni = true);
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const c10::BFloat16* A, const c10::BFloat16* B, float* C, bool is_vnni = true);
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const float* A, const float* B, float* C, bool is_vnni = false);
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const unsigned char* A, const unsigned char* B, int32_t* C, bool is_vnni = true);
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const unsigned char* A, const signed char* B, int32_t* C, bool is_vnni = true);
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const signed char* A, const signed char* B, int32_t* C, bool is_vnni = true);

// Releases per-thread micro-kernel state (none here).
inline void brgemm_release(bool /*is_vnni*/ = true) {}

// Whether `pack` can lay out B for brgemm with this input type: never here (no oneDNN).
inline bool could_pack(c10::ScalarType /*dt_in*/) { return false; }
void pack(int64_t K, int64_t N, int64_t ld_in, int64_t ld_out, c10::ScalarType dt_in,
          c10::ScalarType dt_out, const void* in, void* out);

// Column-major C = alpha * op(A) x op(B) + beta * C (the Fortran BLAS convention), for float,
// double, BFloat16 and Half inputs; gemm_stub's C has the input type, gemm_no_downcast_stub's
// is float for the 16-bit inputs (libtorch's two stubs).
using gemm_fn = void (*)(c10::ScalarType type, TransposeType transa, TransposeType transb,
                         int64_t m, int64_t n, int64_t k, const c10::Scalar& alpha, const void* a,
                         int64_t lda, const void* b, int64_t ldb, const c10::Scalar& beta, void* c,
                         int64_t ldc);
using gemm_no_downcast_fn = gemm_fn;

// libtorch's DispatchStub shape, CPU only: call it with a device type, or take DEFAULT.
template <typename Fn>
struct CpuStub {
  Fn DEFAULT;
  template <typename... Args>
  void operator()(c10::DeviceType /*device*/, Args&&... args) const {
    DEFAULT(static_cast<Args&&>(args)...);
  }
};

extern const CpuStub<gemm_fn> gemm_stub;
extern const CpuStub<gemm_no_downcast_fn> gemm_no_downcast_stub;

}  // namespace cpublas
}  // namespace at::native
