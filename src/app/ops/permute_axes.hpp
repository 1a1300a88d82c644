// The order of dimensions a permutation writes, as `--axes` names it: by the input's dimension
// names ("time,lon,lat": netCDF dimensions, HDF5 dimension scales or labels) or by index
// ("0,2,1"); output dimension k is input dimension axes[k].
#pragma once

#include <string>
#include <vector>

namespace tessera::ops {

// `spec` against the input's dimension names (an empty name: a dimension without one, reachable
// by index only). Empty `spec`: the 2-D transpose (1, 0) for a rank-2 input. InputError naming
// `what` (the dataset) and its dimensions when a name is unknown or repeated, an index out of
// range, not every dimension given, or `spec` empty for an input of rank other than 2.
std::vector<int> resolve_axes(const std::string& spec, const std::vector<std::string>& names,
                              const std::string& what);

// The dimensions `spec` names (--dims of a reduction: "lat,lon" or "1,2"), each once, in the
// input's order; InputError naming `what` and its dimensions for an unknown or repeated one.
std::vector<int> resolve_dims(const std::string& spec, const std::vector<std::string>& names,
                              const std::string& what);

// "(time, lat, lon)", with "dim2" for a dimension without a name: for messages and logs.
std::string describe_dimensions(const std::vector<std::string>& names);

} // namespace tessera::ops
