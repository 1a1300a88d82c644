// InputWatch: notices an input file that changes while an out-of-core run streams it. HDF5
// reads past the end of a file that shrank as zeros, and a file rewritten in place mixes old and
// new data, so neither would fail by itself: the run would end "complete" with wrong values.
//
//   detail::InputWatch watch("a.h5");  // before the file is opened: size, mtime, inode
//   … read a chunk …
//   watch.check("after rows [0, 64)"); // IoError when the file is not as it was
//
// Each rank checks its own view (stat by path: a file replaced by another under the same name
// counts as changed too, since serial-mode readers reopen it by name); callers agree on the
// result (mpi::collectively). A change within one tick of the file system's clock that keeps
// the size is not seen (docs/performance.md, "Inputs that change while they are read").
#pragma once

#include <sys/stat.h>

#include <string>

namespace tessera::io::detail {

class InputWatch {
public:
  // Records the file's state now; IoError naming the file when it cannot be stat'ed.
  explicit InputWatch(std::string path);
  // IoError naming the file and `when` when it is gone, or its size, modification time,
  // inode or device differ from the recorded ones.
  void check(const std::string& when) const;
  const std::string& path() const noexcept { return path_; }

private:
  std::string path_;
  struct stat first_ {};
};

} // namespace tessera::io::detail
