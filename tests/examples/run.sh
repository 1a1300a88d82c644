#!/usr/bin/env bash
# The examples against an installed tessera (cmake/TesseraExamplesTest.cmake):
#   run.sh BUILD_DIR SOURCE_DIR MPIRUN GENERATOR PYTHON [PYTHON_INSTALL_DIR]
# PYTHON is "none" when the Python module was not built.
set -euo pipefail
build=$1 src=$2 mpirun=$3 generator=$4 python=$5 pydir=${6:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
# Nothing internal is installed: the headers are include/tessera/ and nothing else.
if [[ -n $(find "$prefix/include" -name '*.hpp' -path '*/core/*') ]]; then
  echo "internal headers were installed" >&2
  exit 1
fi
test -f "$prefix/lib/cmake/tessera/tesseraConfig.cmake"
test -f "$prefix/lib/cmake/tessera/tesseraConfigVersion.cmake"
test -f "$prefix/lib/pkgconfig/tessera.pc"
# The installed command line links libtessera.a (its commands call tessera's internals, which
# libtessera.so does not export): it runs on its own.
"$prefix/bin/tessera" --version >/dev/null

# The build tree is not on any search path here: only the prefix.
cmake -S "$src/examples" -B "$work/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" || { cat "$work/build.log"; exit 1; }

# pkg-config users: the C example builds from tessera.pc with the MPI wrapper alone.
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" mpicc -o "$work/example_c_pc" \
  "$src/examples/c/tessera_example.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tessera) \
  -Wl,-rpath,"$prefix/lib" -lm

cd "$work"
run() { echo "+ $*"; "$mpirun" -np 3 --oversubscribe "$@"; }
run "$work/build/tessera_example" "$work"
run "$work/build/tessera_example_c"
run "$work/example_c_pc"
if [[ -x "$work/build/tessera_example_fortran" ]]; then
  run "$work/build/tessera_example_fortran"
  run "$work/build/tessera_redistribute_example_fortran"
  run "$work/build/tessera_permute_example_fortran"
else
  echo "the Fortran examples were not built (no Fortran compiler or module)"
fi
if [[ "$python" != none ]]; then
  export PYTHONPATH="$prefix/$pydir${PYTHONPATH:+:$PYTHONPATH}"
  run "$python" "$src/examples/python/tessera_example.py" "$work"
  # test_permute.py and test_redistribute.py run on their own as python.<suite>.npN.
  run "$python" -m pytest -q -p no:cacheprovider "$src/bindings/python/tests/test_tessera.py" \
    "$src/bindings/python/tests/test_cupy.py"
else
  echo "the Python module was not built"
fi

# Every code block of docs/library.md, as a reader would use it (C++-only CMake project,
# pkg-config with and without --static, no LD_LIBRARY_PATH, C, Fortran, Python).
/usr/bin/python3 "$src/tests/examples/doc_snippets.py" "$src/docs/library.md" "$prefix" \
  "$work/snippets" "$mpirun" "$python" "${pydir:-none}"
