// StagingQueue<T>: the bounded, blocking producer–consumer queue between the I/O thread and
// compute. One mutex and two condition variables
// (not_full_ for producers, not_empty_ for consumers), so any number of threads may push and
// pop.
//
//   push(item)  blocks while the queue is full: by item count (capacity) and, when a byte bound
//               is set, by the bytes the queued items hold, so memory in flight stays bounded.
//   pop()       blocks while the queue is empty; std::nullopt once close() was called and the
//               queue is drained.
//   close()     the producers are done: consumers drain what is left, then see the end.
//   abort(e)    something failed: queued items are dropped, every blocked thread wakes, and every
//               push or pop from then on (on either side) rethrows e. The first error wins.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "core/throw.hpp"

namespace tessera::io {

// High-water marks and wait times, to check the memory bound and to tell who waited for whom.
struct QueueStats {
  std::int64_t pushed = 0;
  std::int64_t popped = 0;
  std::size_t max_items = 0;      // most items queued at once
  std::size_t max_bytes = 0;      // most bytes queued at once (0 without a size function)
  double push_wait_seconds = 0.0; // producers blocked on a full queue
  double pop_wait_seconds = 0.0;  // consumers blocked on an empty queue
};

template <class T>
class StagingQueue {
public:
  // Bytes an item holds (its buffer, not sizeof(T)).
  using SizeFn = std::function<std::size_t(const T&)>;

  // At most `capacity` (>= 1) items queued.
  explicit StagingQueue(std::size_t capacity) : StagingQueue(capacity, 0, nullptr) {}
  // Also at most `max_bytes` queued, as measured by `size_of` (max_bytes 0: no byte bound).
  StagingQueue(std::size_t capacity, std::size_t max_bytes, SizeFn size_of)
      : capacity_(capacity), max_bytes_(max_bytes), size_of_(std::move(size_of)) {
    TESSERA_REQUIRE(capacity_ >= 1, InputError, "a staging queue needs a capacity of at least 1");
    TESSERA_REQUIRE(max_bytes_ == 0 || size_of_, InputError,
                    "a staging queue with a byte bound needs a size function");
  }
  StagingQueue(const StagingQueue&) = delete;
  StagingQueue& operator=(const StagingQueue&) = delete;

  // Blocks while the queue is full. Rethrows the abort error; pushing after close() or an item
  // larger than the byte bound (it could never fit) is an error of the caller.
  void push(T item) {
    const std::size_t sz = size_of_ ? size_of_(item) : 0;
    std::unique_lock lock(mutex_);
    if (max_bytes_ != 0 && sz > max_bytes_)
      TESSERA_THROW(ResourceError,
                    "an item of {} bytes can never fit a staging queue bounded to {}", sz,
                    max_bytes_);
    const auto fits = [&] {
      return error_ || closed_ ||
             (items_.size() < capacity_ && (max_bytes_ == 0 || bytes_ + sz <= max_bytes_));
    };
    if (!fits()) {
      const auto t0 = std::chrono::steady_clock::now();
      not_full_.wait(lock, fits);
      stats_.push_wait_seconds += seconds_since(t0);
    }
    if (error_)
      std::rethrow_exception(error_);
    if (closed_)
      TESSERA_THROW(InternalError, "push on a staging queue that was closed");
    items_.push_back(Slot{std::move(item), sz});
    bytes_ += sz;
    stats_.pushed += 1;
    stats_.max_items = std::max(stats_.max_items, items_.size());
    stats_.max_bytes = std::max(stats_.max_bytes, bytes_);
    lock.unlock();
    not_empty_.notify_one();
  }

  // Blocks while the queue is empty and open. std::nullopt: closed and drained.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    const auto ready = [&] { return error_ || closed_ || !items_.empty(); };
    if (!ready()) {
      const auto t0 = std::chrono::steady_clock::now();
      not_empty_.wait(lock, ready);
      stats_.pop_wait_seconds += seconds_since(t0);
    }
    if (error_)
      std::rethrow_exception(error_);
    if (items_.empty())
      return std::nullopt; // closed and drained
    Slot s = std::move(items_.front());
    items_.pop_front();
    bytes_ -= s.bytes;
    stats_.popped += 1;
    lock.unlock();
    // Every producer may be waiting for a different amount of room: wake them all when bytes
    // bound the queue, one is enough when only the count does.
    if (max_bytes_ != 0)
      not_full_.notify_all();
    else
      not_full_.notify_one();
    return std::optional<T>(std::move(s.item));
  }

  // No more pushes: consumers drain the queue, then pop() returns std::nullopt. Idempotent.
  void close() noexcept {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  // Drops the queued items and makes every push and pop, now blocked or later, rethrow `error`.
  // The first error wins; later aborts keep it. A null error becomes an InternalError.
  void abort(std::exception_ptr error) noexcept {
    std::deque<Slot> dropped;
    {
      std::lock_guard lock(mutex_);
      if (!error_)
        error_ = error ? error : make_null_abort_error();
      dropped.swap(items_);
      bytes_ = 0;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
    // `dropped` (and the buffers it owns) is released here, outside the lock.
  }

  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  // The abort error, or null.
  std::exception_ptr error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  std::size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t max_bytes() const noexcept { return max_bytes_; }
  QueueStats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

private:
  struct Slot {
    T item;
    std::size_t bytes;
  };

  static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  static std::exception_ptr make_null_abort_error() noexcept {
    try {
      TESSERA_THROW(InternalError, "a staging queue was aborted without an error");
    } catch (...) {
      return std::current_exception();
    }
  }

  const std::size_t capacity_;
  const std::size_t max_bytes_;
  const SizeFn size_of_;

  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<Slot> items_;
  std::size_t bytes_ = 0;
  bool closed_ = false;
  std::exception_ptr error_;
  QueueStats stats_;
};

} // namespace tessera::io
