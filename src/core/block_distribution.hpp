// Row-block distribution of a global matrix over P ranks: defined in the public header.
#pragma once

#include <tessera/block_distribution.hpp>
