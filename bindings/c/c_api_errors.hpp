// What every function of the C API shares: the per-thread last error message, the mapping of
// tessera's exception kinds to status codes, and `guarded`, which runs a call's body and turns
// whatever it throws into a code and a message.
#pragma once

#include <tessera/tessera.h>

#include <tessera/error.hpp>

#include <exception>
#include <new>
#include <string>

namespace tessera::c_api {

// The message of the last failing call on this thread (tessera_last_error()).
std::string& last_error();

int fail(int code, const char* message);

int code_of(const tessera::Error& e);

// Runs f, turning exceptions into codes and messages.
template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    last_error().clear();
    return TESSERA_OK;
  } catch (const tessera::Error& e) {
    return fail(code_of(e), e.what());
  } catch (const std::bad_alloc&) {
    return fail(TESSERA_ERROR_RESOURCE, "out of memory");
  } catch (const std::exception& e) {
    return fail(TESSERA_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(TESSERA_ERROR_INTERNAL, "unknown exception");
  }
}

// An InputError with `what` unless ok.
void require(bool ok, const char* what);

} // namespace tessera::c_api
