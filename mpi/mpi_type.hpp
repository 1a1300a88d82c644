// MPI datatypes from C++ types (traits, not switches).
#pragma once

#include <mpi.h>

#include <complex>

#include "core/dtype.hpp"

namespace tessera::mpi {

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
inline MPI_Datatype mpi_type<std::complex<float>>() {
  return MPI_CXX_FLOAT_COMPLEX;
}
template <>
inline MPI_Datatype mpi_type<std::complex<double>>() {
  return MPI_CXX_DOUBLE_COMPLEX;
}
template <>
inline MPI_Datatype mpi_type<int>() {
  return MPI_INT;
}
// std::int64_t and std::uint64_t are one of these on every platform.
template <>
inline MPI_Datatype mpi_type<long>() {
  return MPI_LONG;
}
template <>
inline MPI_Datatype mpi_type<long long>() {
  return MPI_LONG_LONG;
}
template <>
inline MPI_Datatype mpi_type<unsigned long>() {
  return MPI_UNSIGNED_LONG;
}
template <>
inline MPI_Datatype mpi_type<unsigned long long>() {
  return MPI_UNSIGNED_LONG_LONG;
}
template <>
inline MPI_Datatype mpi_type<char>() {
  return MPI_CHAR;
}

// The datatype of an element type known at run time: the traits above, through one dispatch.
inline MPI_Datatype mpi_type(DType t) {
  return dispatch_dtype(t, [](auto tag) { return mpi_type<decltype(tag)>(); });
}

} // namespace tessera::mpi
