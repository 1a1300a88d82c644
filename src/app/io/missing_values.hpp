// The missing-value and packing attributes of a dataset, as netCDF and the CF conventions write
// them: `_FillValue` and `missing_value` (a number or a list: elements equal to one are
// missing), `valid_range` or `valid_min`/`valid_max` (elements outside are missing), `scale_factor`
// and `add_offset` (stored x stands for x * scale_factor + add_offset). Attributes of any numeric
// type are read as doubles (exact for the floats and the integers up to 32 bits that these
// attributes hold); a string or empty one is ignored with a warning.
#pragma once

#include <hdf5.h>

#include <string>

#include <tessera/reduction.hpp>

#include "io/h5_file.hpp"

namespace tessera::io {

// Collective. The dataset's missing values, with skip_nan as given. InputError when the
// dataset does not exist.
MissingValues read_missing_values(const H5File& f, const std::string& path, bool skip_nan);

// Whether the dataset at `dset` (an open dataset id) carries scale_factor or add_offset. Local.
bool is_packed(hid_t dset);

} // namespace tessera::io
