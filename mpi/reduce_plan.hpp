// Distributed reduction plans: defined in the public header.
#pragma once

#include <tessera/reduce_plan.hpp>

#include "core/timers.hpp"
