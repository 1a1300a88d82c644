// The distributed permutation of a dataset's dimensions (permute_dataset.hpp): per piece, one
// collective read of the input box, the local permutation (cpu/permute.hpp, or on the GPU
// cuda/permute.hpp: copied in, permuted, copied out), one collective write of the output box.
// The pieces stream (ops/piece_stream.hpp): the I/O thread reads piece p + 1 and writes piece
// p − 1 while this thread permutes piece p, through four buffers (two read, two permuted) that
// share the memory limit, allocated once for the largest piece and reused.
#include "ops/permute_dataset.hpp"

#include <array>
#include <optional>

#include "core/aligned_buffer.hpp"
#include "core/permute_layout.hpp"
#include "core/progress.hpp"
#include "core/throw.hpp"
#include "cpu/permute.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/permute.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "ops/out_of_core_pipeline.hpp"
#include "ops/permute_metadata.hpp"
#include "ops/permute_pieces.hpp"
#include "ops/piece_stream.hpp"

namespace tessera::ops {

namespace {

constexpr std::size_t default_permute_limit = std::size_t{256} << 20;
// Buffers per direction: piece p + 1 read while p is permuted, p − 1 written while p is.
constexpr std::size_t permute_ring = 2;

std::string permute_extent_str(const io::Dims& dims) {
  std::string s;
  for (std::size_t k = 0; k < dims.size(); ++k)
    s += (k ? "x" : "") + std::to_string(dims[k]);
  return s;
}

} // namespace

std::vector<std::int64_t> ArrayInput::shape() const {
  return {info.dims.begin(), info.dims.end()};
}

ArrayInput ArrayInput::open(const io::DatasetRef& ref, MPI_Comm comm) {
  ArrayInput in;
  in.ref = ref;
  in.file.emplace(io::H5File::open_read(ref.file, comm));
  in.info = io::nd::inspect_array(*in.file, ref.path);
  in.dim_names = ops::dimension_names(*in.file, ref.path);
  std::uint64_t elements = 1;
  for (const hsize_t d : in.info.dims)
    elements *= d;
  // Agreed, so that the error is reported once and every rank exits together.
  mpi::collectively(comm, [&] {
    TESSERA_REQUIRE(elements > 0, InputError, "{} is empty ({}): nothing to permute", ref.str(),
                    permute_extent_str(in.info.dims));
  });
  return in;
}

PermuteReport permute_dataset(ArrayInput& in, const io::DatasetRef& out, const PermuteOptions& o,
                              MPI_Comm comm) {
  const double t0 = wall_seconds();
  const int rank = mpi::comm_rank(comm);
  const std::vector<std::int64_t> shape = in.shape();
  mpi::collectively(comm, [&] { check_permutation(shape, o.axes); });
  const DType dtype = in.info.dtype;
  const std::size_t esize = dtype_size(dtype);
  const std::shared_ptr<const ops::PermuteMetadata> carried =
      ops::PermuteMetadata::read(*in.file, in.ref, o.axes, rank);
  const PermutePieces pieces(shape, o.axes, esize, rank, mpi::comm_size(comm),
                             o.memory_limit ? o.memory_limit : default_permute_limit,
                             int(2 * permute_ring));
  // The host buffers: pinned for the GPU's copies, else aligned.
  const bool gpu = o.backend == Backend::Cuda;
  std::array<AlignedBuffer, 2 * permute_ring> aligned;
  std::array<cuda::PinnedBuffer, 2 * permute_ring> pinned;
  std::optional<cuda::HostPermute> device;
  std::optional<detail::FaultSpec> fault;
  std::unique_ptr<io::IoThread> io;
  mpi::collectively(comm, [&] {
    fault = detail::fault_from("");
    if (gpu) {
      cuda::ensure_device_bound();
      for (cuda::PinnedBuffer& b : pinned)
        b = cuda::PinnedBuffer(pieces.buffer_bytes());
      device.emplace();
    } else {
      for (std::size_t k = 0; k < aligned.size(); ++k) {
        const std::string what = k < permute_ring ? "the input pieces of " + in.ref.str()
                                                  : "the output pieces of " + out.str();
        aligned[k] = AlignedBuffer(pieces.buffer_bytes(), what);
      }
    }
  });
  // Its duplicate communicator is made before anything can fail locally (see IoThread).
  mpi::collectively(comm, [&] { io = std::make_unique<io::IoThread>(comm); });
  std::array<void*, permute_ring> in_data{}, out_data{};
  for (std::size_t k = 0; k < permute_ring; ++k) {
    in_data[k] = gpu ? pinned[k].data() : aligned[k].data();
    out_data[k] = gpu ? pinned[permute_ring + k].data() : aligned[permute_ring + k].data();
  }
  PermuteReport report;
  report.shape = permuted_shape(shape, o.axes);
  report.pieces = pieces.count();
  report.buffer_bytes = 2 * permute_ring * pieces.buffer_bytes();
  io::H5File f = io::H5File::create(out.file, comm, o.mode);
  io::nd::create_array(f, out.path, dtype, {report.shape.begin(), report.shape.end()}, o.write);
  // Each side times itself (PhaseTimers is not shared between threads); merged at the end.
  PhaseTimers io_timers, compute_timers;
  Progress progress("permute", double(pieces.count()));
  const auto piece_bytes = [&](std::int64_t p) {
    return double(pieces.piece(p).elements()) * double(esize);
  };
  PieceStreamSteps steps;
  steps.count = pieces.count();
  steps.read = [&](std::int64_t p, void* buffer) {
    ScopedPhase phase(io_timers, "read", piece_bytes(p));
    io::nd::read_array(*in.file, in.ref.path, dtype, pieces.piece(p).in, buffer);
  };
  steps.compute = [&](std::int64_t p, const void* from, void* to) {
    const PermutePieces::Piece piece = pieces.piece(p);
    if (piece.elements() == 0)
      return;
    ScopedPhase phase(compute_timers, "permute", piece_bytes(p));
    if (gpu)
      device->run(from, to, esize, piece.shape, o.axes);
    else
      cpu::permute(from, to, esize, piece.shape, o.axes);
  };
  steps.write = [&](std::int64_t p, const void* buffer) {
    {
      ScopedPhase phase(io_timers, "write", piece_bytes(p));
      io::nd::write_array(f, out.path, dtype, pieces.piece(p).out, buffer);
    }
    progress.update(double(p + 1));
  };
  const PieceStreamWaits waits = stream_pieces(*io, steps, in_data, out_data, fault);
  io->finish();
  progress.finish();
  if (o.timers) {
    detail::merge_timers(*o.timers, io_timers);
    detail::merge_timers(*o.timers, compute_timers);
    o.timers->add("wait: permute on I/O", waits.compute_waited_io);
    o.timers->add("wait: I/O on permute", waits.io_waited_compute);
  }
  in.file->close();
  in.file.reset();
  carried->write_to(f, out, in.ref);
  if (o.provenance)
    io::write_provenance(f, *o.provenance);
  f.commit();
  report.seconds = wall_seconds() - t0;
  return report;
}

} // namespace tessera::ops
