// Carrying a transpose's metadata from input to output (ops/transpose_metadata.hpp).
#include "ops/transpose_metadata.hpp"

#include <set>

#include "core/log.hpp"
#include "io/h5_attribute.hpp"

namespace tessera::ops {

// Chunks and filters: from the flags, or with --like-input from the input (the chunk shape
// transposed), where a flag given explicitly still wins.
std::shared_ptr<const TransposeMetadata> TransposeMetadata::read(const io::H5File& in,
                                                                 const io::DatasetRef& ref,
                                                                 const io::DatasetInfo& info,
                                                                 const io::WriteOptions& flags,
                                                                 bool like_input, int rank) {
  auto c = std::make_shared<TransposeMetadata>();
  c->attributes = io::DatasetAttributes::read(in, ref.path);
  c->globals = io::DatasetAttributes::read(in, "/");
  const io::DatasetStorage storage = dataset_storage(in, ref.path, info.dtype);
  c->write = flags;
  if (like_input) {
    if (flags.chunk_rows == 0) {
      c->write.chunk_rows = storage.options.chunk_cols;
      c->write.chunk_cols = storage.options.chunk_rows;
    }
    if (flags.deflate == 0)
      c->write.deflate = storage.options.deflate;
    c->write.shuffle = flags.shuffle || storage.options.shuffle;
    if (!storage.dropped.empty() && rank == 0)
      log::warn("--like-input: the filters {} of {} are not written (tessera writes gzip and "
                "shuffle only)",
                fmt::join(storage.dropped, ", "), ref.str());
  }
  c->write.fill_value = storage.options.fill_value;
  if (!c->attributes.skipped().empty() && rank == 0)
    log::warn("attributes {} of {} are not copied: they hold object references or "
              "variable-length sequences",
              fmt::join(c->attributes.skipped(), ", "), ref.str());
  const std::vector<io::DimensionScale> scales = io::dimension_scales(in, ref.path);
  for (int k = 0; k < 2; ++k) {
    Scale s{scales.size() == 2 ? scales[static_cast<std::size_t>(1 - k)] : io::DimensionScale{},
            {},
            {}};
    if (!s.scale.path.empty()) {
      s.values = io::read_vector_values(in, s.scale.path);
      s.attributes = io::DatasetAttributes::read(in, s.scale.path);
    }
    c->scales.push_back(std::move(s));
  }
  return c;
}

void TransposeMetadata::write_to(io::H5File& f, const io::DatasetRef& out,
                                 const io::DatasetRef& in) const {
  const TransposeMetadata& c = *this;
  c.globals.write(f, "/", {}, io::DatasetAttributes::Existing::Keep);
  c.attributes.write(f, out.path);
  io::write_attribute(f, out.path, "transpose_of", in.str());
  attach_scales(f, out.path, true);
}

void TransposeMetadata::write_copy_to(io::H5File& f, const std::string& path) const {
  globals.write(f, "/", {}, io::DatasetAttributes::Existing::Keep);
  attributes.write(f, path);
  attach_scales(f, path, false);
}

void TransposeMetadata::attach_scales(io::H5File& f, const std::string& path,
                                      bool transposed) const {
  std::set<std::string> written;
  for (unsigned k = 0; k < scales.size(); ++k) {
    const Scale& s = scales[k];
    if (s.scale.path.empty() || s.scale.path == path)
      continue;
    if (written.insert(s.scale.path).second && !has_dataset(f, s.scale.path)) {
      write_vector_values(f, s.scale.path, s.values);
      s.attributes.write(f, s.scale.path);
    }
    attach_dimension_scale(f, path, transposed ? k : 1 - k, s.scale.path,
                           s.scale.name.empty() ? s.scale.path : s.scale.name);
  }
}

} // namespace tessera::ops
