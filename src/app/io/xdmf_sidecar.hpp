// XDMF descriptions of HDF5 files, so that ParaView and VisIt open them directly: a small XML
// file (the "sidecar") that says which datasets form the mesh and which the fields, pointing at
// the HDF5 file by a relative name (the two stay together when a directory is moved or copied).
//
// What is described: a temporal collection of 2-D rectilinear grids — one grid per snapshot,
// the coordinates of the nodes from two 1-D datasets, and one node-centred scalar field stored
// as a 3-D dataset [snapshots, ny, nx] whose k-th slab is the k-th snapshot (an XDMF hyperslab).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::io {

struct XdmfRectilinearSeries {
  std::string data_file;  // the HDF5 file, relative to the sidecar (its file name)
  std::string x, y;       // 1-D coordinate datasets: [nx] and [ny] (f64)
  std::string field;      // the snapshots, [times.size(), ny, nx] (f64)
  std::string field_name; // as viewers show it
  std::int64_t nx = 0, ny = 0;
  std::vector<double> times; // of each snapshot
};

// The XDMF 2 document (the version ParaView's "XDMF Reader" and VisIt read) describing `s`. The
// names are escaped for XML; a data file name that contains ':' cannot be expressed in XDMF's
// FILE:/dataset syntax and is an InputError.
std::string xdmf_rectilinear_series(const XdmfRectilinearSeries& s);

} // namespace tessera::io
