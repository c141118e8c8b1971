#include "collectives.h"

#include "library.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace purlin::snac_bench {

const char* name(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "AllReduce";
    case Coll::kAllGather: return "AllGather";
    case Coll::kReduceScatter: return "ReduceScatter";
    case Coll::kAllToAll: return "AllToAll";
    case Coll::kBroadcast: return "Broadcast";
    case Coll::kReduce: return "Reduce";
    case Coll::kGather: return "Gather";
    case Coll::kScatter: return "Scatter";
    case Coll::kAllGatherV: return "AllGatherV";
    case Coll::kReduceScatterV: return "ReduceScatterV";
    case Coll::kAllToAllV: return "AllToAllV";
    case Coll::kSendRecvAllToAll: return "SendRecvAllToAll";
  }
  return "?";
}

bool parse(const std::string& s, Coll* c) {
  auto lower = [](std::string x) {
    std::transform(x.begin(), x.end(), x.begin(), [](unsigned char ch) { return std::tolower(ch); });
    return x;
  };
  for (int i = 0; i < kColls; ++i) {
    if (lower(name(static_cast<Coll>(i))) == lower(s)) {
      *c = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

Shape shape(Coll c, int n, std::size_t bytes) {
  Shape s;
  const auto un = static_cast<std::size_t>(n);
  const std::size_t elems = bytes / kElemBytes;
  const std::size_t part = elems / un;  // per-rank partition
  switch (c) {
    case Coll::kAllReduce:
    case Coll::kBroadcast:
    case Coll::kReduce:
      s.count = elems;
      s.in_bytes = s.out_bytes = elems * kElemBytes;
      break;
    case Coll::kAllGather:
    case Coll::kGather:
    case Coll::kAllGatherV:
      s.count = part;
      s.in_bytes = part * kElemBytes;
      s.out_bytes = part * un * kElemBytes;
      break;
    case Coll::kReduceScatter:
    case Coll::kScatter:
    case Coll::kReduceScatterV:
      s.count = part;
      s.in_bytes = part * un * kElemBytes;
      s.out_bytes = part * kElemBytes;
      break;
    case Coll::kAllToAll:
    case Coll::kAllToAllV:
    case Coll::kSendRecvAllToAll:
      s.count = part;
      s.in_bytes = s.out_bytes = part * un * kElemBytes;
      break;
  }
  s.counts.assign(un, s.count);
  return s;
}

double bus_factor(Coll c, int n) {
  const double dn = n;
  switch (c) {
    case Coll::kAllReduce: return 2.0 * (dn - 1) / dn;
    case Coll::kBroadcast:
    case Coll::kReduce: return 1.0;
    default: return (dn - 1) / dn;
  }
}

double output_bytes(Coll c, int n, std::size_t bytes) {
  const double b = static_cast<double>(bytes);
  switch (c) {
    case Coll::kAllReduce:
    case Coll::kAllGather:
    case Coll::kAllGatherV:
    case Coll::kAllToAll:
    case Coll::kAllToAllV:
    case Coll::kSendRecvAllToAll:
    case Coll::kBroadcast: return b * n;  // every rank writes a full message
    default: return b;                    // ReduceScatter(V), Scatter: n pieces; Reduce, Gather: the root
  }
}

bool available(Coll c) {
  const Library& lib = library();
  switch (c) {
    case Coll::kAllGatherV: return lib.all_gather_v != nullptr;
    case Coll::kReduceScatterV: return lib.reduce_scatter_v != nullptr;
    case Coll::kAllToAllV: return lib.all_to_all_v != nullptr;
    default: return true;  // the NCCL API proper (2.28 and later: AllToAll, Gather, Scatter)
  }
}

ncclResult_t issue(Coll c, const Shape& s, const void* in, void* out, ncclComm_t comm, cudaStream_t stream) {
  const ncclDataType_t t = ncclBfloat16;
  const Library& lib = library();
  switch (c) {
    case Coll::kAllReduce: return ncclAllReduce(in, out, s.count, t, ncclSum, comm, stream);
    case Coll::kAllGather: return ncclAllGather(in, out, s.count, t, comm, stream);
    case Coll::kReduceScatter: return ncclReduceScatter(in, out, s.count, t, ncclSum, comm, stream);
    case Coll::kAllToAll: return ncclAlltoAll(in, out, s.count, t, comm, stream);
    case Coll::kBroadcast: return ncclBroadcast(in, out, s.count, t, 0, comm, stream);
    case Coll::kReduce: return ncclReduce(in, out, s.count, t, ncclSum, 0, comm, stream);
    case Coll::kGather: return ncclGather(in, out, s.count, t, 0, comm, stream);
    case Coll::kScatter: return ncclScatter(in, out, s.count, t, 0, comm, stream);
    case Coll::kAllGatherV:
      if (lib.all_gather_v == nullptr) return ncclInvalidUsage;
      return lib.all_gather_v(in, s.count, out, s.counts.data(), nullptr, t, comm, stream);
    case Coll::kReduceScatterV:
      if (lib.reduce_scatter_v == nullptr) return ncclInvalidUsage;
      return lib.reduce_scatter_v(in, s.counts.data(), nullptr, out, s.count, t, ncclSum, comm, stream);
    case Coll::kAllToAllV:
      if (lib.all_to_all_v == nullptr) return ncclInvalidUsage;
      return lib.all_to_all_v(in, s.counts.data(), nullptr, out, s.counts.data(), nullptr, s.count, t, comm,
                              stream);
    case Coll::kSendRecvAllToAll: {
      int n = 0;
      if (ncclResult_t r = ncclCommCount(comm, &n); r != ncclSuccess) return r;
      const std::size_t part = s.count * kElemBytes;
      ncclResult_t r = ncclGroupStart();
      for (int p = 0; p < n && r == ncclSuccess; ++p) {
        r = ncclSend(static_cast<const char*>(in) + p * part, s.count, t, p, comm, stream);
        if (r == ncclSuccess) r = ncclRecv(static_cast<char*>(out) + p * part, s.count, t, p, comm, stream);
      }
      const ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess ? r : end;
    }
  }
  return ncclInternalError;
}

bool parse_bytes(const std::string& s, std::size_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  std::size_t scale = 1;
  const std::string unit = end;
  if (unit == "K" || unit == "k") scale = std::size_t{1} << 10;
  else if (unit == "M" || unit == "m") scale = std::size_t{1} << 20;
  else if (unit == "G" || unit == "g") scale = std::size_t{1} << 30;
  else if (!unit.empty()) return false;
  *out = static_cast<std::size_t>(v) * scale;
  return true;
}

}  // namespace purlin::snac_bench
