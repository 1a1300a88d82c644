// The throw helper behind CHECK_MPI.
#include <mpi.h>

#include "core/check.hpp"
#include "core/throw.hpp"

namespace tessera::detail {

void throw_mpi_error(int code, const char* expr, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw MpiError(fmt::format("{} failed: {}", expr, std::string(text, len)), file, line);
}

} // namespace tessera::detail
