#include "ops/matrix_input.hpp"

namespace tessera::ops {

MatrixInput MatrixInput::open(const io::DatasetRef& ref, MPI_Comm comm) {
  MatrixInput in;
  in.ref = ref;
  in.file.emplace(io::H5File::open_read(ref.file, comm));
  in.info = io::inspect_dataset(*in.file, ref.path);
  return in;
}

MatrixInput MatrixInput::open_for_reduction(const io::DatasetRef& ref, MPI_Comm comm,
                                            bool keep_nan) {
  MatrixInput in;
  in.ref = ref;
  in.file.emplace(io::H5File::open_read(ref.file, comm));
  in.missing = io::read_missing_values(*in.file, ref.path, !keep_nan);
  in.info = io::inspect_dataset(*in.file, ref.path, true); // integers reduced in f64
  if (in.missing.packed() && dtype_is_real(in.info.dtype))
    in.info.dtype = DType::f64;
  return in;
}

MatrixInput MatrixInput::generated(Shape shape, DType dtype) {
  MatrixInput in;
  in.info = {shape, dtype};
  return in;
}

std::string MatrixInput::name() const {
  return ref ? ref->str() : std::string("the generated matrix");
}

void MatrixInput::close() {
  if (file)
    file->close();
  file.reset();
}

} // namespace tessera::ops
