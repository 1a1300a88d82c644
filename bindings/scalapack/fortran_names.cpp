// The Fortran-named ScaLAPACK entry points (C ABI, arguments by reference): a program linked
// with libtessera_scalapack ahead of ScaLAPACK gets tessera's redistribution unchanged.
// Errors cannot cross the C ABI: they end the job with their message, as ScaLAPACK's do.
#include <complex>
#include <exception>

#include "mpi/agreement.hpp"
#include "scalapack_calls.hpp"

namespace {

using tessera::MatrixOp;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class F>
void scalapack_guarded(F&& call) noexcept {
  try {
    call();
  } catch (const std::exception& e) {
    tessera::mpi::abort_job(MPI_COMM_WORLD, e.what());
  }
}

template <class T>
void scalapack_gemr2d(const int* m, const int* n, const T* a, const int* ia, const int* ja,
                      const int* desca, T* b, const int* ib, const int* jb, const int* descb,
                      const int* ictxt) noexcept {
  scalapack_guarded([&] {
    tessera::scalapack::redistribute<T>(*m, *n, T{1}, a, *ia, *ja, desca, T{0}, b, *ib, *jb, descb,
                                        MatrixOp::None, *ictxt);
  });
}

template <class T>
void scalapack_tran(const int* m, const int* n, const T* alpha, const T* a, const int* ia,
                    const int* ja, const int* desca, const T* beta, T* c, const int* ic,
                    const int* jc, const int* descc, MatrixOp op) noexcept {
  scalapack_guarded([&] {
    tessera::scalapack::redistribute<T>(*m, *n, *alpha, a, *ia, *ja, desca, *beta, c, *ic, *jc,
                                        descc, op, desca[1]);
  });
}

} // namespace

#define TESSERA_SCALAPACK_GEMR2D(name, T)                                                          \
  extern "C" TESSERA_SCALAPACK_API void name(                                                      \
      const int* m, const int* n, const T* a, const int* ia, const int* ja, const int* desca,      \
      T* b, const int* ib, const int* jb, const int* descb, const int* ictxt) {                    \
    scalapack_gemr2d<T>(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                          \
  }
#define TESSERA_SCALAPACK_TRAN(name, T, op)                                                        \
  extern "C" TESSERA_SCALAPACK_API void name(                                                      \
      const int* m, const int* n, const T* alpha, const T* a, const int* ia, const int* ja,        \
      const int* desca, const T* beta, T* c, const int* ic, const int* jc, const int* descc) {     \
    scalapack_tran<T>(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc, op);                  \
  }

#define TESSERA_SCALAPACK_API __attribute__((visibility("default")))

TESSERA_SCALAPACK_GEMR2D(psgemr2d_, float)
TESSERA_SCALAPACK_GEMR2D(pdgemr2d_, double)
TESSERA_SCALAPACK_GEMR2D(pcgemr2d_, c64)
TESSERA_SCALAPACK_GEMR2D(pzgemr2d_, c128)
TESSERA_SCALAPACK_TRAN(pstran_, float, MatrixOp::Transpose)
TESSERA_SCALAPACK_TRAN(pdtran_, double, MatrixOp::Transpose)
TESSERA_SCALAPACK_TRAN(pctranu_, c64, MatrixOp::Transpose)
TESSERA_SCALAPACK_TRAN(pztranu_, c128, MatrixOp::Transpose)
TESSERA_SCALAPACK_TRAN(pctranc_, c64, MatrixOp::ConjTranspose)
TESSERA_SCALAPACK_TRAN(pztranc_, c128, MatrixOp::ConjTranspose)
