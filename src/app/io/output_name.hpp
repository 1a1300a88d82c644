// The checks on an output's name that OutputClaim::take makes before it creates anything
// (output_claim.hpp states the rules), and the MPI-IO name limits H5File checks for inputs too.
#pragma once

#include <sys/stat.h>

#include <string>

namespace tessera::io::detail {

// "a character device" for what lstat() found at a name tessera must not replace; nullptr for
// a regular file.
const char* non_regular_kind(mode_t m);
// Throws IoError when `path` exists and is not a regular file; `name` is the output as given.
void require_regular_or_absent(const std::string& name, const std::string& path);
// The name with symbolic links of its last component followed (a dangling link gives the path
// it points to, which is then created). IoError for unreadable links and link loops.
std::string follow_links(const std::string& name);
// IoError unless the directory of `target` exists and is writable.
void check_directory(const std::string& name, const std::string& target);
// InputError when `target`, or NAME.XXXXXX.partial beside it, is longer than the file system
// takes (components over NAME_MAX, paths over PATH_MAX).
void check_lengths(const std::string& name, const std::string& target);

// Throws InputError when MPI-IO (Open MPI's ompio, on a communicator of `nranks`) cannot open
// `path`; `what` names the file for the message. No-op for other MPI libraries.
void check_mpiio_name(const std::string& path, int nranks, const std::string& what);

} // namespace tessera::io::detail
