// The C API's shared error handling (bindings/c/c_api_errors.hpp).
#include "c_api_errors.hpp"

namespace tessera::c_api {

std::string& last_error() {
  thread_local std::string message;
  return message;
}

int fail(int code, const char* message) {
  last_error() = message;
  return code;
}

int code_of(const tessera::Error& e) {
  if (dynamic_cast<const tessera::InputError*>(&e))
    return TESSERA_ERROR_INPUT;
  if (dynamic_cast<const tessera::IoError*>(&e))
    return TESSERA_ERROR_IO;
  if (dynamic_cast<const tessera::MpiError*>(&e))
    return TESSERA_ERROR_MPI;
  if (dynamic_cast<const tessera::CudaError*>(&e))
    return TESSERA_ERROR_CUDA;
  if (dynamic_cast<const tessera::NotCompiled*>(&e))
    return TESSERA_ERROR_NOT_COMPILED;
  if (dynamic_cast<const tessera::ResourceError*>(&e))
    return TESSERA_ERROR_RESOURCE;
  if (dynamic_cast<const tessera::NumericalError*>(&e))
    return TESSERA_ERROR_NUMERICAL;
  return TESSERA_ERROR_INTERNAL;
}

void require(bool ok, const char* what) {
  if (!ok)
    throw tessera::InputError(what, __FILE__, __LINE__);
}

} // namespace tessera::c_api
