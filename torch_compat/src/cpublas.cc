// Why plain loops: the brgemm and gemm entry points exist so that kernel libraries written
// against libtorch link and compute the right thing; the libraries call them from the paths they
// take when libtorch has oneDNN (could_pack, AMX), which opreg reports it has not, so these
// loops serve correctness on the rare path, not speed. The accumulation types are oneDNN's and
// BLAS's (float for 16-bit and float inputs, int32 for 8-bit, double for double).
#include "opreg/torch_compat/cpublas.h"

#include "opreg/torch_compat/macros.h"

namespace at::native::cpublas {
namespace {

// A and B may differ in type only in signedness (u8 x s8); the VNNI group follows B's width.
template <typename InA, typename InB, typename Acc>
void BrgemmImpl(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c,
                bool add_C, const InA* A, const InB* B, Acc* C, bool is_vnni, const char* types) {
  const int64_t v = !is_vnni ? 1 : (sizeof(InB) == 2 ? 2 : (sizeof(InB) == 1 ? 4 : 1));
  TORCH_CHECK(K % v == 0, "brgemm (", types, "): K = ", K, " must be a multiple of the VNNI group ",
              v);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      Acc acc = add_C ? C[m * ld_c + n] : Acc(0);
      for (int64_t k = 0; k < K; ++k) {
        const InB b = B[(k / v) * ld_b * v + n * v + k % v];
        acc += static_cast<Acc>(A[m * ld_a + k]) * static_cast<Acc>(b);
      }
      C[m * ld_c + n] = acc;
    }
  }
}

// Column-major element (i, j) of op(X) with leading dimension ld.
template <typename T>
double At(const T* x, TransposeType trans, int64_t i, int64_t j, int64_t ld) {
  return static_cast<double>(trans == TransposeType::NoTranspose ? x[i + j * ld] : x[j + i * ld]);
}

template <typename In, typename Out>
void GemmTyped(TransposeType transa, TransposeType transb, int64_t m, int64_t n, int64_t k,
               double alpha, const void* a, int64_t lda, const void* b, int64_t ldb, double beta,
               void* c, int64_t ldc) {
  const In* A = static_cast<const In*>(a);
  const In* B = static_cast<const In*>(b);
  Out* C = static_cast<Out*>(c);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      double acc = 0;
      for (int64_t l = 0; l < k; ++l) acc += At(A, transa, i, l, lda) * At(B, transb, l, j, ldb);
      Out& out = C[i + j * ldc];
      // beta == 0 ignores C's old value (it may be uninitialised), as BLAS does.
      const double old = beta == 0 ? 0.0 : beta * static_cast<double>(out);
      out = static_cast<Out>(alpha * acc + old);
    }
  }
}

template <bool kDowncast>
void Gemm(c10::ScalarType type, TransposeType transa, TransposeType transb, int64_t m, int64_t n,
          int64_t k, const c10::Scalar& alpha, const void* a, int64_t lda, const void* b,
          int64_t ldb, const c10::Scalar& beta, void* c, int64_t ldc) {
  const double al = alpha.toDouble(), be = beta.toDouble();
  switch (type) {
    case c10::ScalarType::Float:
      return GemmTyped<float, float>(transa, transb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
    case c10::ScalarType::Double:
      return GemmTyped<double, double>(transa, transb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
    case c10::ScalarType::BFloat16:
      if (kDowncast) {
        return GemmTyped<c10::BFloat16, c10::BFloat16>(transa, transb, m, n, k, al, a, lda, b, ldb,
                                                       be, c, ldc);
      }
      return GemmTyped<c10::BFloat16, float>(transa, transb, m, n, k, al, a, lda, b, ldb, be, c,
                                             ldc);
    case c10::ScalarType::Half:
      if (kDowncast) {
        return GemmTyped<c10::Half, c10::Half>(transa, transb, m, n, k, al, a, lda, b, ldb, be, c,
                                               ldc);
      }
      return GemmTyped<c10::Half, float>(transa, transb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
    default:
      break;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(false, "cpublas::gemm: no kernel for ", c10::toString(type),
                              " (float, double, BFloat16 and Half have one)");
}

}  // namespace

void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const c10::Half* A, const c10::Half* B, float* C, bool is_vnni) {
  BrgemmImpl(M, N, K, ld_a, ld_b, ld_c, add_C, A, B, C, is_vnni, "f16 x f16 -> f32");
}
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const c10::BFloat16* A, const c10::BFloat16* B, float* C, bool is_vnni) {
  BrgemmImpl(M, N, K, ld_a, ld_b, ld_c, add_C, A, B, C, is_vnni, "bf16 x bf16 -> f32");
}
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const float* A, const float* B, float* C, bool is_vnni) {
  TORCH_CHECK(!is_vnni, "brgemm (f32 x f32 -> f32): float has no VNNI layout");
  BrgemmImpl(M, N, K, ld_a, ld_b, ld_c, add_C, A, B, C, false, "f32 x f32 -> f32");
}
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const unsigned char* A, const unsigned char* B, int32_t* C, bool is_vnni) {
  BrgemmImpl(M, N, K, ld_a, ld_b, ld_c, add_C, A, B, C, is_vnni, "u8 x u8 -> s32");
}
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const unsigned char* A, const signed char* B, int32_t* C, bool is_vnni) {
  BrgemmImpl(M, N, K, ld_a, ld_b, ld_c, add_C, A, B, C, is_vnni, "u8 x s8 -> s32");
}
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C,
            const signed char* A, const signed char* B, int32_t* C, bool is_vnni) {
  BrgemmImpl(M, N, K, ld_a, ld_b, ld_c, add_C, A, B, C, is_vnni, "s8 x s8 -> s32");
}

void pack(int64_t, int64_t, int64_t, int64_t, c10::ScalarType dt_in, c10::ScalarType, const void*,
          void*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "cpublas::pack(", c10::toString(dt_in),
                              "): opreg has no oneDNN packing (could_pack() is false)");
}

const CpuStub<gemm_fn> gemm_stub{&Gemm<true>};
const CpuStub<gemm_no_downcast_fn> gemm_no_downcast_stub{&Gemm<false>};

}  // namespace at::native::cpublas
