// XDMF descriptions of HDF5 files, so that ParaView and VisIt open them directly: a small XML
// file (the "sidecar") that says which datasets form the mesh and which the fields, pointing at
// the HDF5 file by a relative name (the two stay together when a directory is moved or copied).
//
// What is described: a temporal collection of 2-D rectilinear grids — one grid per snapshot,
// the coordinates of the nodes from two 1-D datasets, and one node-centred scalar field whose
// k-th snapshot is the 2-D dataset slab_view_path(field_views, k) (io/h5_slab_views.hpp). Plain
// 2-D datasets, not XDMF hyperslabs of a 3-D one: every XDMF reader of ParaView (the legacy
// "XDMF Reader" and the Xdmf3 readers it picks by default) and VisIt reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::io {

struct XdmfRectilinearSeries {
  std::string data_file;   // the HDF5 file, relative to the sidecar (its file name)
  std::string x, y;        // 1-D coordinate datasets: [nx] and [ny] (f64)
  std::string field_views; // the group of the snapshots' 2-D views [ny, nx] (f64)
  std::string field_name;  // as viewers show it
  std::int64_t nx = 0, ny = 0;
  std::vector<double> times; // of each snapshot
};

// The XDMF 2 document (the version every XDMF reader of ParaView and VisIt reads) describing `s`.
// The names are escaped for XML; a data file name that contains ':' cannot be expressed in XDMF's
// FILE:/dataset syntax and is an InputError.
std::string xdmf_rectilinear_series(const XdmfRectilinearSeries& s);

} // namespace tessera::io
