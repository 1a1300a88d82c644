// Carrying a permutation's metadata from input to output (ops/permute_metadata.hpp).
#include "ops/permute_metadata.hpp"

#include <set>

#include "core/log.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_matrix.hpp"

namespace tessera::ops {

std::vector<std::string> dimension_names(const io::H5File& f, const std::string& dataset) {
  std::vector<std::string> names;
  for (const io::DimensionScale& s : io::dimension_scales(f, dataset)) {
    // netCDF-4 names a dimension by its scale dataset; the scale's own NAME of a dimension
    // without a coordinate variable is a sentence ("This is a netCDF dimension but not …").
    if (!s.path.empty())
      names.push_back(s.path.substr(s.path.rfind('/') + 1));
    else
      names.push_back(s.name);
  }
  return names;
}

io::WriteOptions permuted_storage(const io::H5File& in, const io::DatasetRef& ref, DType dtype,
                                  std::span<const int> axes, const io::WriteOptions& flags,
                                  bool like_input, int rank) {
  const io::DatasetStorage storage = io::dataset_storage(in, ref.path, dtype);
  io::WriteOptions w = flags;
  w.fill_value = storage.options.fill_value;
  if (!like_input)
    return w;
  if (flags.chunk_rows == 0 && flags.chunk.empty() && !storage.options.chunk.empty())
    for (const int a : axes)
      w.chunk.push_back(storage.options.chunk.at(static_cast<std::size_t>(a)));
  if (flags.deflate == 0)
    w.deflate = storage.options.deflate;
  w.shuffle = flags.shuffle || storage.options.shuffle;
  if (!storage.dropped.empty() && rank == 0)
    log::warn("--like-input: the filters {} of {} are not written (tessera writes gzip and "
              "shuffle only)",
              fmt::join(storage.dropped, ", "), ref.str());
  return w;
}

std::shared_ptr<const PermuteMetadata> PermuteMetadata::read(const io::H5File& in,
                                                             const io::DatasetRef& ref,
                                                             std::span<const int> axes, int rank) {
  auto m = std::make_shared<PermuteMetadata>();
  m->attributes = io::DatasetAttributes::read(in, ref.path);
  m->globals = io::DatasetAttributes::read(in, "/");
  if (!m->attributes.skipped().empty() && rank == 0)
    log::warn("attributes {} of {} are not copied: they hold object references or "
              "variable-length sequences",
              fmt::join(m->attributes.skipped(), ", "), ref.str());
  const std::vector<io::DimensionScale> scales = io::dimension_scales(in, ref.path);
  for (const int a : axes) {
    Scale s{scales.at(static_cast<std::size_t>(a)), {}, {}};
    if (!s.scale.path.empty()) {
      s.values = io::read_vector_values(in, s.scale.path);
      s.attributes = io::DatasetAttributes::read(in, s.scale.path);
    }
    m->scales.push_back(std::move(s));
  }
  return m;
}

void PermuteMetadata::write_to(io::H5File& f, const io::DatasetRef& out,
                               const io::DatasetRef& in) const {
  globals.write(f, "/", {}, io::DatasetAttributes::Existing::Keep);
  attributes.write(f, out.path);
  io::write_attribute(f, out.path, "transpose_of", in.str());
  write_scales(f, out.path);
}

void PermuteMetadata::write_scales(io::H5File& f, const std::string& out) const {
  std::set<std::string> written;
  for (unsigned k = 0; k < scales.size(); ++k) {
    const Scale& s = scales[k];
    if (s.scale.path.empty() || s.scale.path == out)
      continue;
    if (written.insert(s.scale.path).second && !has_dataset(f, s.scale.path)) {
      write_vector_values(f, s.scale.path, s.values);
      s.attributes.write(f, s.scale.path);
    }
    attach_dimension_scale(f, out, k, s.scale.path,
                           s.scale.name.empty() ? s.scale.path : s.scale.name);
  }
}

} // namespace tessera::ops
