#include "mpi/message_exchange.hpp"

#include "core/check.hpp"
#include "core/throw.hpp"

namespace tessera::mpi {

namespace {

constexpr int kExchangeTag = 7301;

const char* at(const void* base, std::int64_t offset, std::size_t size) {
  return static_cast<const char*>(base) + static_cast<std::size_t>(offset) * size;
}
char* at(void* base, std::int64_t offset, std::size_t size) {
  return static_cast<char*>(base) + static_cast<std::size_t>(offset) * size;
}

MPI_Datatype keep(MPI_Datatype t, std::vector<unique_datatype>& owned) {
  owned.emplace_back(t);
  return t;
}

// n consecutive elements of `base` (extent `extent` bytes) as one datatype, whatever n: runs of
// `limit` elements become a chunk type, recursively, so no int count overflows.
MPI_Datatype long_contiguous(std::int64_t n, MPI_Datatype base, MPI_Aint extent, std::int64_t limit,
                             std::vector<unique_datatype>& owned) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (n <= limit) {
    CHECK_MPI(MPI_Type_contiguous(static_cast<int>(n), base, &t));
    return keep(t, owned);
  }
  MPI_Datatype chunk = MPI_DATATYPE_NULL;
  CHECK_MPI(MPI_Type_contiguous(static_cast<int>(limit), base, &chunk));
  keep(chunk, owned);
  const std::int64_t q = n / limit, rem = n % limit;
  MPI_Datatype body =
      long_contiguous(q, chunk, extent * static_cast<MPI_Aint>(limit), limit, owned);
  if (rem == 0)
    return body;
  MPI_Datatype tail = MPI_DATATYPE_NULL;
  CHECK_MPI(MPI_Type_contiguous(static_cast<int>(rem), base, &tail));
  keep(tail, owned);
  int lens[2] = {1, 1};
  MPI_Aint displs[2] = {0, extent * static_cast<MPI_Aint>(q * limit)};
  MPI_Datatype types[2] = {body, tail};
  CHECK_MPI(MPI_Type_create_struct(2, lens, displs, types, &t));
  return keep(t, owned);
}

bool fits(const std::vector<std::int64_t>& v, std::int64_t limit) {
  for (auto x : v)
    if (x > limit)
      return false;
  return true;
}

std::vector<int> to_int(const std::vector<std::int64_t>& v) {
  return {v.begin(), v.end()};
}

} // namespace

MessageExchange::MessageExchange(MPI_Comm comm, MPI_Datatype element, std::size_t element_size,
                                 std::vector<std::int64_t> send_counts,
                                 std::vector<std::int64_t> send_offsets,
                                 std::vector<std::int64_t> recv_counts,
                                 std::vector<std::int64_t> recv_offsets, std::int64_t message_limit)
    : comm_(comm), element_(element), element_size_(element_size),
      limit_(std::min<std::int64_t>(message_limit, INT_MAX)), send_counts_(std::move(send_counts)),
      send_offsets_(std::move(send_offsets)), recv_counts_(std::move(recv_counts)),
      recv_offsets_(std::move(recv_offsets)) {
  // Each level of long_contiguous() divides the count by the limit: 2 is the least that ends.
  TESSERA_REQUIRE(limit_ >= 2, InputError, "the message limit must be at least 2 elements, got {}",
                  message_limit);
  CHECK_MPI(MPI_Comm_rank(comm, &rank_));
  CHECK_MPI(MPI_Comm_size(comm, &size_));
  const auto p = static_cast<std::size_t>(size_);
  TESSERA_REQUIRE(send_counts_.size() == p && send_offsets_.size() == p &&
                      recv_counts_.size() == p && recv_offsets_.size() == p,
                  InternalError, "exchange: {} ranks but {} segments", size_, send_counts_.size());
  for (std::size_t s = 0; s < p; ++s) {
    send_segments_.push_back(segment(send_counts_[s], owned_types_));
    recv_segments_.push_back(segment(recv_counts_[s], owned_types_));
  }
  large_ = !(fits(send_counts_, limit_) && fits(send_offsets_, limit_) &&
             fits(recv_counts_, limit_) && fits(recv_offsets_, limit_));
  if (!large_) {
    sc_ = to_int(send_counts_);
    so_ = to_int(send_offsets_);
    rc_ = to_int(recv_counts_);
    ro_ = to_int(recv_offsets_);
  }
}

MessageExchange::Segment MessageExchange::segment(std::int64_t elements,
                                                  std::vector<unique_datatype>& owned) const {
  if (elements <= limit_)
    return {static_cast<int>(elements), element_};
  MPI_Aint lb = 0, extent = 0;
  CHECK_MPI(MPI_Type_get_extent(element_, &lb, &extent));
  MPI_Datatype t = long_contiguous(elements, element_, extent, limit_, owned);
  CHECK_MPI(MPI_Type_commit(&t));
  return {1, t};
}

void MessageExchange::alltoallv(const void* send, void* recv) {
  if (large_) {
    alltoallw(send, recv);
    return;
  }
  CHECK_MPI(MPI_Alltoallv(send, sc_.data(), so_.data(), element_, recv, rc_.data(), ro_.data(),
                          element_, comm_));
}

// Every segment described by its absolute address, so that no int displacement overflows.
void MessageExchange::alltoallw(const void* send, void* recv) {
  const auto p = static_cast<std::size_t>(size_);
  std::vector<unique_datatype> owned;
  std::vector<MPI_Datatype> stypes(p, element_), rtypes(p, element_);
  std::vector<int> scounts(p, 0), rcounts(p, 0), zeros(p, 0);
  auto describe = [&](const Segment& seg, const void* address, MPI_Datatype& type, int& count) {
    if (seg.count == 0)
      return;
    MPI_Aint where = 0;
    CHECK_MPI(MPI_Get_address(address, &where));
    MPI_Datatype t = MPI_DATATYPE_NULL;
    CHECK_MPI(MPI_Type_create_struct(1, &seg.count, &where, &seg.type, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    owned.emplace_back(t);
    type = t;
    count = 1;
  };
  for (std::size_t s = 0; s < p; ++s) {
    describe(send_segments_[s], at(send, send_offsets_[s], element_size_), stypes[s], scounts[s]);
    describe(recv_segments_[s], at(recv, recv_offsets_[s], element_size_), rtypes[s], rcounts[s]);
  }
  CHECK_MPI(MPI_Alltoallw(MPI_BOTTOM, scounts.data(), zeros.data(), stypes.data(), MPI_BOTTOM,
                          rcounts.data(), zeros.data(), rtypes.data(), comm_));
}

void MessageExchange::pairwise(const void* send, void* recv) {
  for (int k = 1; k < size_; ++k) {
    const int to = send_peer(k), from = recv_peer(k);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    // Both sides know both sizes, so empty segments are skipped on both.
    if (const auto& r = recv_segments_[from]; r.count > 0)
      CHECK_MPI(MPI_Irecv(at(recv, recv_offsets_[from], element_size_), r.count, r.type, from,
                          kExchangeTag, comm_, &req[0]));
    if (const auto& s = send_segments_[to]; s.count > 0)
      CHECK_MPI(MPI_Isend(at(send, send_offsets_[to], element_size_), s.count, s.type, to,
                          kExchangeTag, comm_, &req[1]));
    CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  }
}

void MessageExchange::pipelined(const void* send, void* recv, const std::function<void(int)>& pack,
                                const std::function<void()>& local,
                                const std::function<void(int)>& unpack) {
  const auto p = static_cast<std::size_t>(size_);
  std::vector<MPI_Request> recvs(p, MPI_REQUEST_NULL), sends(p, MPI_REQUEST_NULL);
  std::vector<int> source(p, -1);
  for (int k = 1; k < size_; ++k) {
    const int from = recv_peer(k);
    source[k] = from;
    if (const auto& r = recv_segments_[from]; r.count > 0)
      CHECK_MPI(MPI_Irecv(at(recv, recv_offsets_[from], element_size_), r.count, r.type, from,
                          kExchangeTag, comm_, &recvs[k]));
  }
  for (int k = 1; k < size_; ++k) {
    const int to = send_peer(k);
    const auto& s = send_segments_[to];
    if (s.count == 0)
      continue;
    if (pack)
      pack(to);
    CHECK_MPI(MPI_Isend(at(send, send_offsets_[to], element_size_), s.count, s.type, to,
                        kExchangeTag, comm_, &sends[k]));
  }
  if (local)
    local();
  for (;;) {
    int k = MPI_UNDEFINED;
    CHECK_MPI(MPI_Waitany(size_, recvs.data(), &k, MPI_STATUS_IGNORE));
    if (k == MPI_UNDEFINED)
      break;
    if (unpack)
      unpack(source[k]);
  }
  CHECK_MPI(MPI_Waitall(size_, sends.data(), MPI_STATUSES_IGNORE));
}

} // namespace tessera::mpi
