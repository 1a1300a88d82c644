// Where kernels run and where data lives: defined in the public header.
#pragma once

#include <tessera/backend.hpp>
