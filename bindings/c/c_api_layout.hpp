// The layout handle (tessera_layout) as the C API's files share it: the layouts and
// redistributions define it, the reductions over a layout take it.
#pragma once

#include <tessera/layout.hpp>

struct tessera_layout_s {
  tessera::Layout layout;
};
