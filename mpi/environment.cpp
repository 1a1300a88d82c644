#include "mpi/environment.hpp"

#include <mpi.h>

#include "core/check.hpp"

namespace tessera::mpi {

int init_thread_multiple(int* argc, char*** argv) {
  int provided = MPI_THREAD_SINGLE;
  CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
  return provided;
}

void finalize() {
  CHECK_MPI(MPI_Finalize());
}

bool initialized() noexcept {
  int flag = 0;
  int finalized = 0;
  return MPI_Initialized(&flag) == MPI_SUCCESS && flag != 0 &&
         MPI_Finalized(&finalized) == MPI_SUCCESS && finalized == 0;
}

int thread_level() {
  int provided = MPI_THREAD_SINGLE;
  CHECK_MPI(MPI_Query_thread(&provided));
  return provided;
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS)
    return "unknown";
  std::string s(text, static_cast<std::size_t>(len));
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == '\r'))
    s.pop_back();
  return s;
}

} // namespace tessera::mpi
