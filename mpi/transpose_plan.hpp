// Distributed transpose plans: defined in the public header.
#pragma once

#include <tessera/transpose_plan.hpp>

#include "core/timers.hpp"
#include "mpi/exchange_algorithm.hpp"
