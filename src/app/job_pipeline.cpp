// Job kind "pipeline": generate or read a matrix, transpose it, reduce it, write the results.
#include "app/jobs.hpp"
#include "core/throw.hpp"

namespace tessera::app {

void pipeline_schema(DeckSchema& s) {
  s.add("matrix.rows", std::int64_t{1000}, "rows M of the generated matrix");
  s.add("matrix.cols", std::int64_t{999}, "columns N of the generated matrix");
  s.add("matrix.dtype", std::string("f64"), "element type: f32, f64, c64, c128",
        {"f32", "f64", "c64", "c128"});
  s.add("matrix.seed", std::int64_t{42}, "values depend only on seed and position");
  s.add("matrix.input", std::string(""), "read FILE.h5:/dataset instead of generating");
  s.add("transpose.enabled", true, "transpose the matrix");
  s.add("transpose.exchange", std::string("auto"), "auto, alltoallv, pairwise, pipelined",
        {"auto", "alltoallv", "pairwise", "pipelined"});
  s.add("transpose.repeat", std::int64_t{1}, "executions of the plan (timing)");
  s.add("reduce.enabled", true, "reduce the matrix");
  s.add("reduce.ops", std::vector<std::string>{"sum", "norm2", "max"},
        "sum, min, max, mean, norm1, norm2, norminf");
  s.add("reduce.axis", std::string("all"), "all, rows (one per row) or cols",
        {"all", "rows", "cols"});
  s.add("output.file", std::string("tessera-pipeline.h5"), "HDF5 output; \"\" writes none");
  s.add("output.write_input", true, "store the matrix as /input");
  s.add("output.write_transpose", true, "store the transpose as /transpose");
  s.add("output.chunk_rows", std::int64_t{0}, "HDF5 chunk rows (0: contiguous)");
  s.add("output.chunk_cols", std::int64_t{0}, "HDF5 chunk columns (0: contiguous)");
  s.add("output.deflate", std::int64_t{0}, "gzip level 0-9 (needs chunks)");
}

int run_pipeline_job(const Deck&, const Context&) {
  TESSERA_THROW(NotCompiled, "the pipeline job is not available yet");
}

} // namespace tessera::app
