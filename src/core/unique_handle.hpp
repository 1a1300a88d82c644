// A move-only owner for C handles (MPI_Comm, MPI_Datatype, hid_t, cudaStream_t, …).
// Traits supply the type, the null value and a destroy function. Destructors never throw:
// a failing destroy is logged, because it usually runs while another error unwinds.
#pragma once

#include <utility>

namespace tessera {

// struct Traits { using type = …; static type null() noexcept; static void destroy(type) noexcept;
// };
template <class Traits>
class unique_handle {
public:
  using type = typename Traits::type;

  unique_handle() noexcept : h_(Traits::null()) {}
  explicit unique_handle(type h) noexcept : h_(h) {}
  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  unique_handle(unique_handle&& o) noexcept : h_(std::exchange(o.h_, Traits::null())) {}
  unique_handle& operator=(unique_handle&& o) noexcept {
    if (this != &o)
      reset(std::exchange(o.h_, Traits::null()));
    return *this;
  }
  ~unique_handle() { reset(); }

  type get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != Traits::null(); }
  type release() noexcept { return std::exchange(h_, Traits::null()); }
  void reset(type h = Traits::null()) noexcept {
    if (h_ != Traits::null())
      Traits::destroy(h_);
    h_ = h;
  }

private:
  type h_;
};

} // namespace tessera
