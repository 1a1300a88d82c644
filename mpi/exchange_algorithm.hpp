// The exchange algorithms of the distributed transpose: defined in the public header.
#pragma once

#include <tessera/exchange.hpp>
