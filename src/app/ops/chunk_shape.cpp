// Names of the out-of-core chunk shapes, and the report's one-line description of its chunks.
#include <fmt/format.h>

#include "core/throw.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {

const char* chunk_shape_name(ChunkShape s) noexcept {
  return s == ChunkShape::ColumnPanels ? "columns" : "rows";
}

ChunkShape parse_chunk_shape(const std::string& s) {
  if (s == "rows")
    return ChunkShape::RowSlabs;
  if (s == "columns")
    return ChunkShape::ColumnPanels;
  TESSERA_THROW(InputError, "unknown chunk shape '{}': use rows or columns", s);
}

std::string OutOfCoreReport::chunks_str() const {
  const bool panels = chunk_shape == ChunkShape::ColumnPanels;
  return fmt::format("{} chunks of {} {}", chunks, panels ? chunk_cols : chunk_rows,
                     chunk_shape_name(chunk_shape));
}

} // namespace tessera::ops
