// The global shape of a row-major matrix: defined in the public header, one definition for the
// library and its users.
#pragma once

#include <tessera/shape.hpp>
