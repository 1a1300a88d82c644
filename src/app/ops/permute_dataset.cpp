// The distributed permutation of a dataset's dimensions (permute_dataset.hpp): per piece, one
// collective read of the input box, the local permutation (cpu/permute.hpp, or on the GPU
// cuda/permute.hpp: copied in, permuted, copied out), one collective write of the output box. The
// buffers are allocated once, for the largest piece, and reused.
#include "ops/permute_dataset.hpp"

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
#include "ops/permute_metadata.hpp"
#include "ops/permute_pieces.hpp"

namespace tessera::ops {

namespace {

constexpr std::size_t default_permute_limit = std::size_t{256} << 20;

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
                             o.memory_limit ? o.memory_limit : default_permute_limit);
  // The host buffers: pinned for the GPU's copies, else aligned.
  const bool gpu = o.backend == Backend::Cuda;
  AlignedBuffer in_buf, out_buf;
  cuda::PinnedBuffer in_pinned, out_pinned;
  std::optional<cuda::HostPermute> device;
  mpi::collectively(comm, [&] {
    if (gpu) {
      cuda::ensure_device_bound();
      in_pinned = cuda::PinnedBuffer(pieces.buffer_bytes());
      out_pinned = cuda::PinnedBuffer(pieces.buffer_bytes());
      device.emplace();
    } else {
      in_buf = AlignedBuffer(pieces.buffer_bytes(), "the input pieces of " + in.ref.str());
      out_buf = AlignedBuffer(pieces.buffer_bytes(), "the output pieces of " + out.str());
    }
  });
  void* const in_data = gpu ? in_pinned.data() : in_buf.data();
  void* const out_data = gpu ? out_pinned.data() : out_buf.data();
  PermuteReport report;
  report.shape = permuted_shape(shape, o.axes);
  report.pieces = pieces.count();
  report.buffer_bytes = 2 * pieces.buffer_bytes();
  io::H5File f = io::H5File::create(out.file, comm, o.mode);
  io::nd::create_array(f, out.path, dtype, {report.shape.begin(), report.shape.end()}, o.write);
  PhaseTimers scratch;
  PhaseTimers& timers = o.timers ? *o.timers : scratch;
  Progress progress("permute", double(pieces.count()));
  for (std::int64_t p = 0; p < pieces.count(); ++p) {
    const PermutePieces::Piece piece = pieces.piece(p);
    const double bytes = double(piece.elements()) * double(esize);
    {
      ScopedPhase phase(timers, "read", bytes);
      io::nd::read_array(*in.file, in.ref.path, dtype, piece.in, in_data);
    }
    if (piece.elements() > 0) {
      ScopedPhase phase(timers, "permute", bytes);
      if (gpu)
        device->run(in_data, out_data, esize, piece.shape, o.axes);
      else
        cpu::permute(in_data, out_data, esize, piece.shape, o.axes);
    }
    {
      ScopedPhase phase(timers, "write", bytes);
      io::nd::write_array(f, out.path, dtype, piece.out, out_data);
    }
    progress.update(double(p + 1));
  }
  progress.finish();
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
