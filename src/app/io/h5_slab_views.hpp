// 2-D views of the slabs of a 3-D dataset: HDF5 virtual datasets, each mapping one slab
// [k, :, :] of the source (in the same file) as a dataset of its own, without copying data.
// XDMF readers need them: ParaView's Xdmf3 readers (its default for .xmf files) cannot load a
// field given as an XDMF hyperslab, and its legacy XDMF reader cannot load Xdmf3's
// FILE:/path|start:stride:count syntax; a plain 2-D dataset is read by both.
//
// Collective over the file's communicator; throws on every rank when it fails on one.
#pragma once

#include <cstdint>
#include <string>

#include "io/h5_file.hpp"

namespace tessera::io {

// The path of view k: "<group>/<k>".
std::string slab_view_path(const std::string& group, std::int64_t k);

// Creates views 0 … count-1 of the f64 dataset `source` [>= count, ny, nx] under `group`.
void create_slab_views(H5File& f, const std::string& source, const std::string& group,
                       std::int64_t count);

} // namespace tessera::io
