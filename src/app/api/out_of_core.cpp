// tessera/out_of_core.hpp over ops/out_of_core.hpp, with a library's defaults: no progress lines,
// no delays or faults taken from the environment.
#include <tessera/out_of_core.hpp>

#include <memory>

#include "api/closing.hpp"
#include "io/missing_values.hpp"
#include "mpi/communicator.hpp"
#include "ops/out_of_core.hpp"
#include "ops/transpose_metadata.hpp"

namespace tessera {

namespace {
ops::OutOfCoreOptions internal(const OutOfCoreOptions& o) {
  ops::OutOfCoreOptions r;
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
  // The output keeps the input's metadata, as `tessera transpose` does.
  const io::DatasetRef in = ref(in_file, in_dataset), out = ref(out_file, out_dataset);
  api::closing_after_error([&] {
    ops::OutOfCoreOptions o = internal(options);
    std::shared_ptr<const ops::TransposeMetadata> meta;
    {
      const io::H5File f = io::H5File::open_read(in.file, comm);
      meta = ops::TransposeMetadata::read(f, in, io::inspect_dataset(f, in.path), {}, false,
                                          mpi::comm_rank(comm));
    }
    o.write = meta->write;
    o.before_commit = [meta, in, out](io::H5File& f) { meta->write_to(f, out, in); };
    ops::transpose_out_of_core(in, out, o, comm);
  });
}

ReduceResult reduce_out_of_core(const std::string& file, const std::string& dataset,
                                const std::vector<Op>& ops, Axis axis, MPI_Comm comm,
                                const OutOfCoreOptions& options) {
  return api::closing_after_error([&] {
    ops::OutOfCoreOptions o = internal(options);
    const io::DatasetRef in = ref(file, dataset);
    {
      const io::H5File f = io::H5File::open_read(in.file, comm);
      o.missing = io::read_missing_values(f, in.path, !options.keep_nan);
    }
    return ops::reduce_out_of_core(in, ops, axis, o, comm);
  });
}

} // namespace tessera
