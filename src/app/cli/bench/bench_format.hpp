// How `tessera bench` prints its reports: a text table per report, one line per report for a
// benchmark matrix (--shapes / --classes), or one JSON object per report (--json).
#pragma once

#include <string>
#include <vector>

#include "cli/bench/bench.hpp"

namespace tessera::app {

std::string to_json(const BenchReport& r);
std::string to_table(const BenchReport& r);
// `reduce`: the columns of reductions (axis, ops); otherwise those of transposes (kernel, geam,
// tile).
std::string to_matrix_table(const std::vector<BenchReport>& reports, bool reduce);

} // namespace tessera::app
