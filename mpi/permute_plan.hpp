// Distributed permutations of dimensions: defined in the public header.
#pragma once

#include <tessera/permute_plan.hpp>
