#!/usr/bin/env bash
# library.exports: libtessera.so exports its public API and nothing else (docs/library.md):
#   exports.sh LIBTESSERA_SO INCLUDE_DIR
# Every exported symbol must be a C function declared in tessera.h or a name of namespace tessera
# (or tessera::h5) that the public headers declare; none may belong to tessera's internals or to
# the libraries built into it (spdlog, fmt, the standard library's templates). And the public API
# must be there: every function of tessera.h, the plans, the I/O, the solver, the error types.
set -euo pipefail
lib=$1 include=$2
syms=$(nm -DC --defined-only "$lib" | sed -E 's/^[0-9a-f]* +[A-Za-z] +//')
failed=0
fail() {
  echo "$lib: $1" >&2
  failed=1
}

# No internals: each symbol is checked against the public headers by its first name after the
# namespace ("tessera::TransposePlan::execute(…)" -> TransposePlan, "tessera_last_error" itself).
while IFS= read -r s; do
  if [[ $s =~ spdlog::|fmt::|::Impl\b|\{lambda|tessera::(app|cpu|cuda|detail|heat|io|mpi|reference)[a-z0-9_]*:: ]]; then
    fail "exports an internal symbol: $s"
  elif [[ $s =~ ^tessera_[a-z0-9_]+$ ]]; then
    grep -qw -- "$s" "$include/tessera.h" || fail "exports $s, which tessera.h does not declare"
  elif [[ $s =~ ^((typeinfo( name)? for |vtable for )?)tessera::(h5::)?([A-Za-z_][A-Za-z0-9_]*) ]]; then
    name=${BASH_REMATCH[5]}
    grep -qw -- "$name" "$include"/*.hpp ||
      fail "exports $s: '$name' is not a name of the public headers"
  else
    fail "exports a symbol outside the public API: $s"
  fi
done <<<"$syms"

# The public API is exported.
need() {
  grep -qxF -- "$1" <<<"$syms" || fail "does not export $1"
}
need_prefix() {
  grep -qF -- "$1" <<<"$(grep -- '^[^ ]' <<<"$syms" | cut -c1-${#1})" ||
    fail "does not export $1…"
}
for f in $(grep -oE '\btessera_[a-z0-9_]+\(' "$include/tessera.h" | tr -d '(' | sort -u); do
  need "$f"
done
need "tessera::TransposePlan::execute(void const*, void*)"
need "tessera::ReducePlan::execute(void const*)"
need "tessera::PermutePlan::execute(void const*, void*)"
need "tessera::PermutePlan::output_block(int) const"
need "tessera::ReduceResult::operator[](tessera::Op) const"
need "tessera::BlockDistribution::owner(long) const"
need "tessera::Heat2dSolver::step(long)"
need "tessera::Heat2dSolver::diagnostics()"
need "tessera::h5::Writer::commit()"
need "tessera::set_log_level(tessera::LogLevel)"
need "tessera::version()"
need_prefix "tessera::TransposePlan::TransposePlan(tessera::BlockDistribution const&"
need_prefix "tessera::PermutePlan::PermutePlan(std::vector<long"
need_prefix "tessera::h5::read_rows("
need_prefix "tessera::h5::write_rows("
need_prefix "tessera::h5::inspect("
need_prefix "tessera::transpose_out_of_core("
need_prefix "tessera::reduce_out_of_core("
need_prefix "tessera::parse_dtype("
need_prefix "tessera::set_log_sink("
# The exceptions' type information: an application's catch (const tessera::IoError&) matches what
# the library throws only when both see the library's one copy.
for e in Error InputError IoError MpiError CudaError NotCompiled ResourceError NumericalError \
  InternalError; do
  need "typeinfo for tessera::$e"
done
if ((failed)); then
  echo "$(wc -l <<<"$syms") symbols exported; see them with: nm -DC --defined-only $lib" >&2
  exit 1
fi
echo "$(wc -l <<<"$syms") exported symbols, all of the public API"
