#include "io/h5_direct_read.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_handle.hpp"

namespace tessera::io::detail {

namespace {

// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

void read_fully(int fd, char* dst, std::uint64_t bytes, std::uint64_t at, const std::string& file) {
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, dst, static_cast<std::size_t>(bytes), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      TESSERA_THROW(IoError, "cannot read '{}' at byte {}: {}", file, at,
                    n == 0 ? "the file ends before the dataset does" : std::strerror(errno));
    dst += n;
    at += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::uint64_t>(n);
  }
}

// A long run is read by several threads at once: one thread's copy from the page cache is far
// below what the memory takes.
constexpr std::uint64_t kSplitFrom = std::uint64_t{16} << 20;

// Threads for `bytes` in `pieces` at most: several from kSplitFrom on, at most 4.
unsigned threads_for(std::uint64_t bytes, std::uint64_t pieces) {
  if (bytes < kSplitFrom)
    return 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(
      std::min<std::uint64_t>({std::min(cores, 4u), pieces, bytes / (kSplitFrom / 2)}));
}

// fn(0) … fn(parts - 1), fn(0) on the calling thread; the first exception is rethrown.
template <class Fn>
void in_parallel(unsigned parts, const Fn& fn) {
  std::vector<std::exception_ptr> errors(parts);
  const auto guarded = [&](unsigned k) {
    try {
      fn(k);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned k = 1; k < parts; ++k)
    helpers.emplace_back(guarded, k);
  guarded(0);
  for (auto& t : helpers)
    t.join();
  for (const auto& e : errors)
    if (e)
      std::rethrow_exception(e);
}

void read_run(int fd, char* dst, std::uint64_t bytes, std::uint64_t at, const std::string& file) {
  const unsigned parts = threads_for(bytes, bytes / 4096 + 1);
  const std::uint64_t piece = (bytes / parts + 4095) / 4096 * 4096;
  in_parallel(parts, [&](unsigned k) {
    const std::uint64_t lo = std::min<std::uint64_t>(k * piece, bytes);
    const std::uint64_t hi = std::min<std::uint64_t>(lo + piece, bytes);
    read_fully(fd, dst + lo, hi - lo, at + lo, file);
  });
}

} // namespace

std::optional<std::uint64_t> direct_read_offset(hid_t dset, hid_t mem_type) {
  const unique_hid dcpl = checked_hid(H5Dget_create_plist(dset), "H5Dget_create_plist");
  if (H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl.get()) != 0 ||
      H5Pget_external_count(dcpl.get()) != 0)
    return std::nullopt;
  const unique_hid type = checked_hid(H5Dget_type(dset), "H5Dget_type");
  if (H5Tequal(type.get(), mem_type) <= 0)
    return std::nullopt;
  const haddr_t offset = H5Dget_offset(dset);
  if (offset == HADDR_UNDEF) // never written: HDF5 fills it with the fill value
    return std::nullopt;
  return static_cast<std::uint64_t>(offset);
}

void read_box_directly(const std::string& file, std::uint64_t offset, const Dims& dims,
                       std::size_t element_size, const Box& box, void* buf) {
  const std::size_t nd = dims.size();
  if (box.size() == 0 || nd == 0)
    return;
  // The innermost dimensions the box covers whole, and the one below them, make one run.
  std::size_t inner = nd; // dimensions [inner, nd) are covered whole
  while (inner > 0 && box.start[inner - 1] == 0 && box.count[inner - 1] == dims[inner - 1])
    --inner;
  const std::size_t run_dim = inner == 0 ? 0 : inner - 1;
  std::uint64_t run = element_size; // bytes of one run
  for (std::size_t k = run_dim; k < nd; ++k)
    run *= k == run_dim ? box.count[k] : dims[k];
  std::vector<std::uint64_t> stride(nd, element_size); // bytes between neighbours along k
  for (std::size_t k = nd - 1; k > 0; --k)
    stride[k - 1] = stride[k] * dims[k];
  std::uint64_t runs = 1, first = offset + box.start[run_dim] * stride[run_dim];
  for (std::size_t k = 0; k < run_dim; ++k)
    runs *= box.count[k];
  // Run i, the dimensions before run_dim counted with the last fastest.
  const auto position = [&](std::uint64_t i) {
    std::uint64_t pos = first;
    for (std::size_t k = run_dim; k-- > 0;) {
      pos += (box.start[k] + i % box.count[k]) * stride[k];
      i /= box.count[k];
    }
    return pos;
  };

  Fd f;
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0)
    TESSERA_THROW(IoError, "cannot open '{}': {}", file, std::strerror(errno));
  char* dst = static_cast<char*>(buf);
  if (runs == 1) {
    read_run(f.fd, dst, run, position(0), file);
    return;
  }
  // Many runs (a panel of columns): threads take stretches of them.
  const unsigned parts = threads_for(runs * run, runs);
  in_parallel(parts, [&](unsigned k) {
    const std::uint64_t lo = runs * k / parts, hi = runs * (k + 1) / parts;
    for (std::uint64_t i = lo; i < hi; ++i)
      read_fully(f.fd, dst + i * run, run, position(i), file);
  });
}

} // namespace tessera::io::detail
