// tessera/out_of_core.hpp over ops/out_of_core.hpp, with a library's defaults: no progress lines,
// no delays or faults taken from the environment.
#include <tessera/out_of_core.hpp>

#include "api/closing.hpp"
#include "ops/out_of_core.hpp"

namespace tessera {

namespace {
io::OutOfCoreOptions internal(const OutOfCoreOptions& o) {
  io::OutOfCoreOptions r;
  static_cast<OutOfCoreOptions&>(r) = o; // the options the library has, as given
  r.progress = false;
  r.io_delay_ms = 0.0;
  r.compute_delay_ms = 0.0;
  r.fault = "none"; // an application's TESSERA_FAULT is not tessera's to act on
  return r;
}
// Dataset paths are absolute inside the file; "A" means "/A" as in h5py.
io::DatasetRef ref(const std::string& file, const std::string& dataset) {
  return {file, dataset.starts_with('/') ? dataset : "/" + dataset};
}
} // namespace

void transpose_out_of_core(const std::string& in_file, const std::string& in_dataset,
                           const std::string& out_file, const std::string& out_dataset,
                           MPI_Comm comm, const OutOfCoreOptions& options) {
  api::closing_after_error([&] {
    io::transpose_out_of_core(ref(in_file, in_dataset), ref(out_file, out_dataset),
                              internal(options), comm);
  });
}

ReduceResult reduce_out_of_core(const std::string& file, const std::string& dataset,
                                const std::vector<Op>& ops, Axis axis, MPI_Comm comm,
                                const OutOfCoreOptions& options) {
  return api::closing_after_error([&] {
    return io::reduce_out_of_core(ref(file, dataset), ops, axis, internal(options), comm);
  });
}

} // namespace tessera
