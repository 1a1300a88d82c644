// Reading HDF5's error stack. HDF5's automatic printing of the stack is switched off once per
// process (ensure_hdf5_ready): tessera turns failures into exceptions that carry the innermost
// message instead, so a user sees one clear line, not a 20-frame trace on every rank.
#pragma once

#include <string>

namespace tessera::io::detail {

// Once per process: initialise HDF5 and silence its automatic error printing. Every entry
// point of src/app/io calls it before its first HDF5 call.
void ensure_hdf5_ready();

// The innermost (most specific) message of the current error stack, e.g. "unable to open file:
// name = 'x.h5', errno = 2, error message = 'No such file or directory'"; clears the stack.
// "" when the stack is empty.
std::string take_hdf5_error();

} // namespace tessera::io::detail
