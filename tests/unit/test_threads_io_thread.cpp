// IoThread without MPI (MPI_COMM_NULL): FIFO order, results and errors through futures,
// cancel and shutdown with requests pending, naming and pinning, and errors crossing between
// the I/O thread and compute through a StagingQueue. The communicator and thread-level checks
// are exercised by the MPI tests (tests/io/test_out_of_core_*.cpp).
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "io/io_thread.hpp"
#include "io/staging_queue.hpp"

using namespace tessera;
using tessera::io::IoThread;
using tessera::io::StagingQueue;

// An exception that crosses threads through a future is freed by whichever thread drops the
// last reference to it, through libstdc++'s atomic reference count. libstdc++.so is not built
// with ThreadSanitizer, so TSan cannot see that count and reports the catching thread's reads
// of the exception as racing with its destruction on the I/O thread. Only that path is
// silenced.
extern "C" const char* __tsan_default_suppressions() {
  return "race:std::__exception_ptr::exception_ptr::_M_release\n";
}

TEST(IoThread, RunsRequestsInSubmissionOrder) {
  const unsigned seed = std::random_device{}();
  const int n = 200 + static_cast<int>(seed % 2000);
  SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << n << " requests");
  IoThread io(MPI_COMM_NULL);
  std::vector<int> order; // touched only on the I/O thread until the futures are ready
  std::vector<std::future<int>> results;
  for (int i = 0; i < n; ++i)
    results.push_back(io.submit([&order, i, &io] {
      EXPECT_TRUE(io.on_io_thread());
      order.push_back(i);
      return i * 2;
    }));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(results[i].get(), 2 * i);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(order[i], i);
  EXPECT_FALSE(io.on_io_thread());
}

TEST(IoThread, KeepsEachSubmittersOrderWithSeveralSubmitters) {
  IoThread io(MPI_COMM_NULL);
  const int submitters = 4, per = 300;
  std::vector<std::pair<int, int>> order;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::future<void>>> done(submitters);
  for (int s = 0; s < submitters; ++s)
    threads.emplace_back([&, s] {
      for (int i = 0; i < per; ++i)
        done[s].push_back(io.submit([&order, s, i] { order.emplace_back(s, i); }));
    });
  for (auto& t : threads)
    t.join();
  for (auto& d : done)
    for (auto& f : d)
      f.get();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(submitters * per));
  std::vector<int> last(submitters, -1);
  for (auto [s, i] : order) {
    EXPECT_EQ(i, last[s] + 1);
    last[s] = i;
  }
}

TEST(IoThread, DeliversRequestErrorsThroughFuturesAndKeepsGoing) {
  IoThread io(MPI_COMM_NULL);
  auto bad = io.submit([]() -> int { throw IoError("cannot read chunk 3", __FILE__, __LINE__); });
  auto good = io.submit([] { return 5; });
  try {
    bad.get();
    FAIL() << "the request's error was lost";
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "cannot read chunk 3");
  }
  EXPECT_EQ(good.get(), 5);
}

TEST(IoThread, CancelFailsRequestsThatHaveNotStarted) {
  IoThread io(MPI_COMM_NULL);
  std::promise<void> release;
  auto gate = release.get_future().share();
  std::promise<void> running;
  auto first = io.submit([gate, &running] {
    running.set_value();
    gate.wait();
    return 1;
  });
  running.get_future().wait();
  std::vector<std::future<int>> pending;
  for (int i = 0; i < 5; ++i)
    pending.push_back(io.submit([i] { return i; }));
  io.cancel(std::make_exception_ptr(IoError("stop: write failed", __FILE__, __LINE__)));
  for (auto& f : pending)
    EXPECT_THROW(f.get(), IoError);
  EXPECT_THROW(io.submit([] {}), InternalError);
  release.set_value();
  EXPECT_EQ(first.get(), 1); // the running request finishes normally
}

TEST(IoThread, DestructionWithPendingRequestsNeitherHangsNorLosesThem) {
  std::vector<std::future<void>> pending;
  std::promise<void> release;
  {
    IoThread io(MPI_COMM_NULL);
    auto gate = release.get_future().share();
    pending.push_back(io.submit([gate] { gate.wait(); }));
    for (int i = 0; i < 10; ++i)
      pending.push_back(io.submit([] {}));
    release.set_value();
  }
  // Each request either ran or was cancelled with an error that says so; none is left hanging.
  for (auto& f : pending) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    try {
      f.get();
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find("shut down"), std::string::npos) << e.what();
    }
  }
}

TEST(IoThread, FinishRunsEverythingSubmitted) {
  std::atomic<int> ran{0};
  IoThread io(MPI_COMM_NULL);
  std::vector<std::future<void>> fs;
  for (int i = 0; i < 100; ++i)
    fs.push_back(io.submit([&] { ++ran; }));
  io.finish();
  EXPECT_EQ(ran.load(), 100);
  for (auto& f : fs)
    EXPECT_NO_THROW(f.get());
  io.finish(); // idempotent
  EXPECT_THROW(io.submit([] {}), InternalError);
}

TEST(IoThread, IsNamedAndCanBePinned) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed))
    ++cpu;
  // The last allowed CPU, so the test means something on machines where CPU 0 is the default.
  for (int c = cpu; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed))
      cpu = c;

  IoThread io(MPI_COMM_NULL, {.io_cpu = cpu});
  auto probe = io.submit([] {
    char name[32] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    cpu_set_t mine;
    CPU_ZERO(&mine);
    pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine);
    return std::make_pair(std::string(name), mine);
  });
  auto [name, mine] = probe.get();
  EXPECT_EQ(name, "tessera-io");
  EXPECT_EQ(CPU_COUNT(&mine), 1);
  EXPECT_TRUE(CPU_ISSET(cpu, &mine));
}

TEST(IoThread, RejectsACpuItMayNotUse) {
  EXPECT_THROW(IoThread(MPI_COMM_NULL, {.io_cpu = CPU_SETSIZE + 5}), InputError);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (!CPU_ISSET(c, &allowed)) {
      EXPECT_THROW(IoThread(MPI_COMM_NULL, {.io_cpu = c}), InputError) << "CPU " << c;
      break;
    }
}

// An error on the compute side reaches a request blocked on a queue, and its future carries
// it back.
TEST(IoThread, ComputeErrorsReachABlockedRequest) {
  IoThread io(MPI_COMM_NULL);
  StagingQueue<int> to_io(2);
  auto writer = io.submit([&] {
    int n = 0;
    while (auto v = to_io.pop())
      n += *v;
    return n;
  });
  to_io.push(1);
  to_io.abort(std::make_exception_ptr(InputError("compute failed on chunk 2", __FILE__, __LINE__)));
  EXPECT_THROW(writer.get(), InputError);
}

// An error on the I/O thread reaches compute blocked on the read-ahead queue.
TEST(IoThread, IoErrorsReachBlockedCompute) {
  IoThread io(MPI_COMM_NULL);
  StagingQueue<int> from_io(1);
  auto reader = io.submit([&] {
    try {
      from_io.push(1);
      from_io.push(2);
      throw IoError("read failed at chunk 3", __FILE__, __LINE__);
    } catch (...) {
      from_io.abort(std::current_exception());
      throw;
    }
  });
  int got = 0;
  try {
    while (auto v = from_io.pop())
      got += *v;
    FAIL() << "the I/O error did not reach compute";
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "read failed at chunk 3");
  }
  EXPECT_LE(got, 3);
  EXPECT_THROW(reader.get(), IoError);
}
