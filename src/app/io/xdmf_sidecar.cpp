// The XDMF document of a series of 2-D rectilinear snapshots (see xdmf_sidecar.hpp).
#include "io/xdmf_sidecar.hpp"

#include <fmt/format.h>

#include "core/throw.hpp"
#include "io/h5_slab_views.hpp"

namespace tessera::io {

namespace {

std::string xml_escaped(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace

std::string xdmf_rectilinear_series(const XdmfRectilinearSeries& s) {
  if (s.data_file.find(':') != std::string::npos)
    TESSERA_THROW(InputError,
                  "cannot describe '{}' in XDMF: its file name contains ':', which XDMF reads as "
                  "the separator of FILE:/dataset",
                  s.data_file);
  const std::string file = xml_escaped(s.data_file);
  const auto ref = [&](const std::string& dataset) { return file + ":" + xml_escaped(dataset); };
  const std::size_t n = s.times.size();
  std::string doc = "<?xml version=\"1.0\" ?>\n"
                    "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
                    "<Xdmf Version=\"2.0\">\n"
                    "  <Domain>\n"
                    "    <Grid Name=\"series\" GridType=\"Collection\" "
                    "CollectionType=\"Temporal\">\n";
  for (std::size_t k = 0; k < n; ++k) {
    // Precision 17: the time a viewer shows is the stored one, bit for bit.
    doc += fmt::format(
        "      <Grid Name=\"snapshot {k}\" GridType=\"Uniform\">\n"
        "        <Time Value=\"{t:.17g}\"/>\n"
        "        <Topology TopologyType=\"2DRectMesh\" Dimensions=\"{ny} {nx}\"/>\n"
        "        <Geometry GeometryType=\"VXVY\">\n"
        "          <DataItem Dimensions=\"{nx}\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"HDF\">{x}</DataItem>\n"
        "          <DataItem Dimensions=\"{ny}\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"HDF\">{y}</DataItem>\n"
        "        </Geometry>\n"
        "        <Attribute Name=\"{name}\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        "          <DataItem Dimensions=\"{ny} {nx}\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"HDF\">{u}</DataItem>\n"
        "        </Attribute>\n"
        "      </Grid>\n",
        fmt::arg("k", k), fmt::arg("t", s.times[k]), fmt::arg("nx", s.nx), fmt::arg("ny", s.ny),
        fmt::arg("x", ref(s.x)), fmt::arg("y", ref(s.y)),
        fmt::arg("u", ref(slab_view_path(s.field_views, static_cast<std::int64_t>(k)))),
        fmt::arg("name", xml_escaped(s.field_name)));
  }
  doc += "    </Grid>\n"
         "  </Domain>\n"
         "</Xdmf>\n";
  return doc;
}

} // namespace tessera::io
