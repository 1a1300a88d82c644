// tessera/hdf5.hpp over the internal HDF5 layer (io/h5_file.hpp, io/h5_matrix.hpp).
#include <tessera/hdf5.hpp>

#include <optional>

#include "api/closing.hpp"
#include "core/throw.hpp"
#include "io/h5_file.hpp"
#include "io/h5_layout.hpp"
#include "io/h5_matrix.hpp"
#include "mpi/communicator.hpp"

namespace tessera::h5 {

DatasetInfo inspect(const std::string& file, const std::string& dataset, MPI_Comm comm) {
  return api::closing_after_error([&] {
    const io::H5File f = io::H5File::open_read(file, comm);
    return io::inspect_dataset(f, dataset);
  });
}

void read_rows(const std::string& file, const std::string& dataset, const BlockDistribution& dist,
               DType dtype, void* block, MPI_Comm comm) {
  api::closing_after_error([&] {
    const io::H5File f = io::H5File::open_read(file, comm);
    io::read_rows(f, dataset, dist, mpi::comm_rank(comm), dtype, block);
  });
}

struct Writer::Impl {
  std::optional<io::H5File> file;
  int rank = 0;
};

Writer::Writer(const std::string& file, MPI_Comm comm) : impl_(std::make_unique<Impl>()) {
  impl_->file.emplace(io::H5File::create(file, comm));
  impl_->rank = mpi::comm_rank(comm);
}

Writer::~Writer() = default;
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;

void Writer::write_rows(const std::string& dataset, const BlockDistribution& dist, DType dtype,
                        const void* block, const WriteOptions& options) {
  TESSERA_REQUIRE(impl_ && impl_->file, InputError,
                  "h5::Writer: '{}' cannot be written after commit()", dataset);
  io::write_rows(*impl_->file, dataset, dist, impl_->rank, dtype, block, io::WriteOptions{options});
}

void Writer::write_layout(const std::string& dataset, const Layout& layout, DType dtype,
                          const void* block, const WriteOptions& options,
                          std::int64_t memory_limit) {
  TESSERA_REQUIRE(impl_ && impl_->file, InputError,
                  "h5::Writer: '{}' cannot be written after commit()", dataset);
  io::write_layout(*impl_->file, dataset, layout, dtype, block, io::WriteOptions{options},
                   memory_limit);
}

void Writer::commit() {
  TESSERA_REQUIRE(impl_ && impl_->file, InputError, "h5::Writer: commit() called twice");
  impl_->file->commit();
  impl_->file.reset();
}

void write_rows(const std::string& file, const std::string& dataset, const BlockDistribution& dist,
                DType dtype, const void* block, MPI_Comm comm, const WriteOptions& options) {
  api::closing_after_error([&] {
    Writer w(file, comm);
    w.write_rows(dataset, dist, dtype, block, options);
    w.commit();
  });
}

void read_layout(const std::string& file, const std::string& dataset, const Layout& layout,
                 DType dtype, void* block, MPI_Comm comm, std::int64_t memory_limit) {
  api::closing_after_error([&] {
    const io::H5File f = io::H5File::open_read(file, comm);
    io::read_layout(f, dataset, layout, dtype, block, memory_limit);
  });
}

void write_layout(const std::string& file, const std::string& dataset, const Layout& layout,
                  DType dtype, const void* block, MPI_Comm comm, const WriteOptions& options,
                  std::int64_t memory_limit) {
  api::closing_after_error([&] {
    Writer w(file, comm);
    w.write_layout(dataset, layout, dtype, block, options, memory_limit);
    w.commit();
  });
}

} // namespace tessera::h5
