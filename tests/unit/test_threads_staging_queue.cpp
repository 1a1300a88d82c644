// StagingQueue: exactly-once delivery with several producers and consumers, close() and abort()
// semantics, and the item and byte bounds. Built with ThreadSanitizer in CI (label threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "io/staging_queue.hpp"

using namespace tessera;
using tessera::io::StagingQueue;

namespace {

unsigned fresh_seed() {
  return std::random_device{}();
}

// Lets a blocked thread reach its wait. Only used where a too-short pause could make a test
// pass without exercising the blocking path, never fail it.
void pause_briefly() {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

struct Item {
  int producer = 0;
  int index = 0;
};

} // namespace

TEST(StagingQueue, DeliversEveryItemExactlyOnceWithSeveralProducersAndConsumers) {
  const unsigned seed = fresh_seed();
  std::mt19937 rng(seed);
  const int producers = 1 + static_cast<int>(rng() % 4);
  const int consumers = 1 + static_cast<int>(rng() % 4);
  const int per_producer = 500 + static_cast<int>(rng() % 1500);
  const std::size_t capacity = 1 + rng() % 8;
  SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << producers << " producers, "
                                  << consumers << " consumers, " << per_producer
                                  << " items each, capacity " << capacity);

  StagingQueue<Item> q(capacity);
  std::vector<std::vector<Item>> received(consumers);
  std::vector<std::thread> threads;
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&, c] {
      while (auto item = q.pop())
        received[c].push_back(*item);
    });
  std::vector<std::thread> pushers;
  for (int p = 0; p < producers; ++p)
    pushers.emplace_back([&, p] {
      for (int i = 0; i < per_producer; ++i)
        q.push(Item{p, i});
    });
  for (auto& t : pushers)
    t.join();
  q.close();
  for (auto& t : threads)
    t.join();

  std::vector<std::vector<int>> count(producers, std::vector<int>(per_producer, 0));
  std::size_t total = 0;
  for (const auto& got : received) {
    // One consumer sees each producer's items in the order they were pushed (FIFO).
    std::vector<int> last(producers, -1);
    for (const Item& it : got) {
      ASSERT_GE(it.producer, 0);
      ASSERT_LT(it.producer, producers);
      EXPECT_GT(it.index, last[it.producer]) << "out of order from producer " << it.producer;
      last[it.producer] = it.index;
      ++count[it.producer][it.index];
    }
    total += got.size();
  }
  EXPECT_EQ(total, static_cast<std::size_t>(producers) * per_producer);
  for (int p = 0; p < producers; ++p)
    for (int i = 0; i < per_producer; ++i)
      ASSERT_EQ(count[p][i], 1) << "item " << i << " of producer " << p;
  const auto s = q.stats();
  EXPECT_EQ(s.pushed, producers * per_producer);
  EXPECT_EQ(s.popped, producers * per_producer);
  EXPECT_LE(s.max_items, capacity);
}

TEST(StagingQueue, CloseDrainsThenEnds) {
  StagingQueue<int> q(4);
  q.push(1);
  q.push(2);
  q.close();
  EXPECT_TRUE(q.closed());
  EXPECT_EQ(q.pop(), 1);
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), std::nullopt);
  EXPECT_EQ(q.pop(), std::nullopt); // stays ended
  EXPECT_THROW(q.push(3), InternalError);
  q.close(); // idempotent
}

TEST(StagingQueue, CloseWakesBlockedConsumers) {
  StagingQueue<int> q(2);
  std::atomic<int> ended{0};
  std::vector<std::thread> consumers;
  for (int c = 0; c < 3; ++c)
    consumers.emplace_back([&] {
      if (!q.pop())
        ++ended;
    });
  pause_briefly();
  EXPECT_EQ(ended.load(), 0);
  q.close();
  for (auto& t : consumers)
    t.join();
  EXPECT_EQ(ended.load(), 3);
}

TEST(StagingQueue, AbortWakesBlockedProducersAndRethrowsTheError) {
  StagingQueue<int> q(1);
  q.push(0); // now full
  std::atomic<int> saw_error{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p)
    producers.emplace_back([&] {
      try {
        q.push(1);
      } catch (const IoError& e) {
        if (std::string(e.what()) == "disk full")
          ++saw_error;
      }
    });
  pause_briefly();
  q.abort(std::make_exception_ptr(IoError("disk full", __FILE__, __LINE__)));
  for (auto& t : producers)
    t.join();
  EXPECT_EQ(saw_error.load(), 3);
  // The queued item was dropped and the other side sees the same error.
  EXPECT_THROW(q.pop(), IoError);
  EXPECT_EQ(q.size(), 0u);
}

TEST(StagingQueue, AbortWakesBlockedConsumersAndRethrowsTheError) {
  StagingQueue<int> q(3);
  std::atomic<int> saw_error{0};
  std::vector<std::thread> consumers;
  for (int c = 0; c < 3; ++c)
    consumers.emplace_back([&] {
      try {
        q.pop();
      } catch (const InputError&) {
        ++saw_error;
      }
    });
  pause_briefly();
  q.abort(std::make_exception_ptr(InputError("bad chunk", __FILE__, __LINE__)));
  for (auto& t : consumers)
    t.join();
  EXPECT_EQ(saw_error.load(), 3);
  EXPECT_THROW(q.push(1), InputError);
}

TEST(StagingQueue, FirstAbortErrorWinsAndANullErrorStillAborts) {
  StagingQueue<int> q(2);
  q.abort(std::make_exception_ptr(IoError("first", __FILE__, __LINE__)));
  q.abort(std::make_exception_ptr(InputError("second", __FILE__, __LINE__)));
  EXPECT_THROW(q.pop(), IoError);

  StagingQueue<int> r(2);
  r.abort(nullptr);
  EXPECT_THROW(r.pop(), InternalError);
  EXPECT_TRUE(r.error() != nullptr);
}

TEST(StagingQueue, AbortAfterCloseStillWakesAndThrows) {
  StagingQueue<int> q(2);
  q.push(7);
  q.close();
  q.abort(std::make_exception_ptr(IoError("late failure", __FILE__, __LINE__)));
  EXPECT_THROW(q.pop(), IoError);
}

// Memory stays bounded: buffers alive at any time are those queued (<= max_bytes) plus one in
// the hands of each producer and each consumer.
TEST(StagingQueue, ByteBoundKeepsMemoryInFlightBounded) {
  const unsigned seed = fresh_seed();
  std::mt19937 rng(seed);
  const std::size_t max_item = 1000;
  const std::size_t max_bytes = max_item + rng() % (4 * max_item);
  const int producers = 1 + static_cast<int>(rng() % 3);
  const int consumers = 1 + static_cast<int>(rng() % 3);
  const int per_producer = 300;
  SCOPED_TRACE(testing::Message() << "seed " << seed << ", max_bytes " << max_bytes << ", "
                                  << producers << " producers, " << consumers << " consumers");

  std::atomic<long> live{0};
  std::atomic<long> peak{0};
  struct Tracked {
    Tracked(std::size_t n, std::atomic<long>* live_bytes, std::atomic<long>* peak_bytes)
        : data(n), live_(live_bytes) {
      const long now = live_->fetch_add(static_cast<long>(n)) + static_cast<long>(n);
      long p = peak_bytes->load();
      while (now > p && !peak_bytes->compare_exchange_weak(p, now)) {
      }
    }
    Tracked(Tracked&& o) noexcept : data(std::move(o.data)), live_(o.live_) { o.data.clear(); }
    Tracked& operator=(Tracked&&) = delete;
    ~Tracked() { live_->fetch_sub(static_cast<long>(data.size())); }
    std::vector<char> data;
    std::atomic<long>* live_;
  };
  using Buf = std::unique_ptr<Tracked>;
  StagingQueue<Buf> q(1000, max_bytes, [](const Buf& b) { return b->data.size(); });

  std::vector<std::thread> threads;
  std::atomic<long> consumed_bytes{0};
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      while (auto b = q.pop()) {
        consumed_bytes += static_cast<long>((*b)->data.size());
        std::this_thread::yield();
      }
    });
  std::vector<std::thread> pushers;
  std::atomic<long> produced_bytes{0};
  for (int p = 0; p < producers; ++p)
    pushers.emplace_back([&, p] {
      std::mt19937 local(seed + static_cast<unsigned>(p));
      for (int i = 0; i < per_producer; ++i) {
        const std::size_t n = 1 + local() % max_item;
        produced_bytes += static_cast<long>(n);
        q.push(std::make_unique<Tracked>(n, &live, &peak));
      }
    });
  for (auto& t : pushers)
    t.join();
  q.close();
  for (auto& t : threads)
    t.join();

  EXPECT_EQ(consumed_bytes.load(), produced_bytes.load());
  EXPECT_EQ(live.load(), 0);
  EXPECT_LE(q.stats().max_bytes, max_bytes);
  EXPECT_LE(static_cast<std::size_t>(peak.load()),
            max_bytes + static_cast<std::size_t>(producers + consumers) * max_item);
}

TEST(StagingQueue, ByteBoundBlocksAProducerUntilThereIsRoom) {
  StagingQueue<std::vector<char>> q(100, 100, [](const std::vector<char>& v) { return v.size(); });
  q.push(std::vector<char>(60));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.push(std::vector<char>(60));
    pushed = true;
  });
  pause_briefly();
  EXPECT_FALSE(pushed.load()) << "60 + 60 bytes exceed the bound of 100";
  EXPECT_EQ(q.pop()->size(), 60u);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.bytes(), 60u);
  EXPECT_GT(q.stats().push_wait_seconds, 0.0);
  EXPECT_THROW(q.push(std::vector<char>(101)), ResourceError);
}

TEST(StagingQueue, RejectsAZeroCapacityAndAByteBoundWithoutASizeFunction) {
  EXPECT_THROW(StagingQueue<int>(0), InputError);
  EXPECT_THROW(StagingQueue<int>(4, 100, nullptr), InputError);
}

TEST(StagingQueue, MoveOnlyItemsPassThrough) {
  StagingQueue<std::unique_ptr<int>> q(2);
  q.push(std::make_unique<int>(42));
  auto v = q.pop();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(**v, 42);
}
