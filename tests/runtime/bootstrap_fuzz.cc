// Fuzz target over the bootstrap's parsers: the frame reader at every protocol step (fed in
// chunks of varying size), the header checks, and the checks of the hello bodies.
//
// An input is: one byte choosing the step, one byte choosing the chunk size, then the bytes a
// peer would send. Besides not crashing, every input must keep the reader's promises: a
// refused header leaves a reason and no body; a complete frame passes its checks; the body
// never holds much more than the bytes that arrived.
//
// Built with clang's -fsanitize=fuzzer, libFuzzer drives LLVMFuzzerTestOneInput. Otherwise
// (CI builds with gcc) the main() below replays the seed corpus and then mutations of it, for
// a bounded number of runs or seconds:
//   purlin_bootstrap_fuzz CORPUS_DIR [--runs N] [--seconds S] [--seed X]
//   purlin_bootstrap_fuzz --write-seeds DIR   (regenerates the committed seed corpus)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "runtime/bootstrap/frame.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime::wire {
namespace {

struct Step {
  const char* name;
  Expect expect;
};

// Every step of both handshakes, the table for a few group sizes, and the data phase.
std::vector<Step> steps() {
  return {
      {"root_hello", expect_exactly(kRootMagic, FrameType::kRootHello, sizeof(RootHello))},
      {"challenge", expect_exactly(kRootMagic, FrameType::kChallenge, sizeof(Challenge))},
      {"root_proof", expect_exactly(kRootMagic, FrameType::kProof, sizeof(Proof))},
      {"root_reply", expect_exactly(kRootMagic, FrameType::kRootReply, sizeof(RootReply))},
      {"table_1", expect_exactly(kRootMagic, FrameType::kRootTable, 1 * sizeof(TableEntry))},
      {"table_4", expect_exactly(kRootMagic, FrameType::kRootTable, 4 * sizeof(TableEntry))},
      {"peer_hello", expect_exactly(kPeerMagic, FrameType::kPeerHello, sizeof(PeerHello))},
      {"peer_proof", expect_exactly(kPeerMagic, FrameType::kProof, sizeof(Proof))},
      {"data", expect_data()},
  };
}

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what);
  std::abort();
}

// Parses what a complete frame carries, as the root and the listeners do.
void check_body(const Step& step, FrameReader& r) {
  const FrameHeader& h = r.header();
  if (!check_header(h, step.expect).empty()) broken("a complete frame fails its header check");
  if (r.body().size() != h.bytes) broken("body size differs from the header's");
  switch (step.expect.type) {
    case FrameType::kRootHello:
      (void)check_root_hello(r.body_as<RootHello>());
      break;
    case FrameType::kPeerHello:
      (void)check_peer_hello(r.body_as<PeerHello>(), 1, 4);
      break;
    case FrameType::kRootTable:
      for (size_t at = 0; at + sizeof(TableEntry) <= r.body().size(); at += sizeof(TableEntry)) {
        TableEntry e;
        std::memcpy(&e, r.body().data() + at, sizeof(e));
        net::Address a;
        if (net::Address::from_wire(e.listen, &a)) (void)a.str();
      }
      break;
    default:
      break;
  }
}

void run_one(const uint8_t* data, size_t size) {
  if (size < 2) return;
  static const std::vector<Step> all = steps();
  const Step& step = all[data[0] % all.size()];
  const size_t chunk = 1 + data[1] % 97;
  data += 2;
  size -= 2;
  FrameReader r;
  r.expect(step.expect);
  size_t fed = 0;
  while (fed < size) {
    size_t used = 0;
    const FrameReader::Status st = r.feed(data + fed, std::min(chunk, size - fed), &used);
    fed += used;
    if (r.body().capacity() > 2 * (fed + (size_t{1} << 20))) broken("body allocated ahead of the bytes received");
    if (st == FrameReader::Status::kBad) {
      if (r.error().empty()) broken("a refused header without a reason");
      if (!r.body().empty()) broken("a refused header with a body");
      return;
    }
    if (st == FrameReader::Status::kFrame) {
      check_body(step, r);
      if (step.expect.type != FrameType::kData) return;
      r.expect(step.expect);  // data frames follow one another
    } else if (used == 0) {
      broken("no progress on available input");
    }
  }
}

// The committed corpus: one well-formed stream per step, plus a few near misses.
std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  const std::vector<Step> all = steps();
  for (size_t i = 0; i < all.size(); ++i) {
    const Step& s = all[i];
    for (uint64_t len : {s.expect.min_bytes, s.expect.min_bytes + 1, uint64_t{1} << 63}) {
      if (s.expect.type == FrameType::kData) len = len == 0 ? 16 : len;
      FrameHeader h = make_header(s.expect.magic, s.expect.type, len);
      std::vector<uint8_t> in = {static_cast<uint8_t>(i), static_cast<uint8_t>(7 * i + 3)};
      in.insert(in.end(), reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
      const size_t body = static_cast<size_t>(std::min<uint64_t>(len, 256));
      for (size_t b = 0; b < body; ++b) in.push_back(static_cast<uint8_t>(b * 31 + i));
      if (s.expect.type == FrameType::kRootHello && len == sizeof(RootHello)) {
        RootHello hello{};
        hello.rank = 1;
        hello.nranks = 4;
        hello.listen.family = 2;  // AF_INET
        std::memcpy(in.data() + 2 + sizeof(h), &hello, sizeof(hello));
      }
      out.emplace_back(std::string(s.name) + "_" + std::to_string(len), std::move(in));
    }
  }
  return out;
}

// Mutations that matter to a length-checking parser: bit flips, interesting values at the
// header's length field, truncation, repetition and splicing of another seed.
std::vector<uint8_t> mutate(std::vector<uint8_t> in, const std::vector<std::vector<uint8_t>>& corpus,
                            std::mt19937_64& rng) {
  const int count = 1 + static_cast<int>(rng() % 4);
  for (int m = 0; m < count; ++m) {
    switch (rng() % 6) {
      case 0:
        if (!in.empty()) in[rng() % in.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!in.empty()) in[rng() % in.size()] = static_cast<uint8_t>(rng());
        break;
      case 2: {  // the length field of the first header (offset 2 + 16)
        static const uint64_t interesting[] = {0, 1, 31, 32, 33, 39, 40, 41, 63, 64, 65, 95, 96, 97,
                                               uint64_t{1} << 32, uint64_t{1} << 63, ~uint64_t{0},
                                               kMaxMessageBytes, kMaxMessageBytes + 1};
        const uint64_t v = interesting[rng() % std::size(interesting)];
        if (in.size() >= 2 + 24) std::memcpy(in.data() + 2 + 16, &v, sizeof(v));
        break;
      }
      case 3:
        if (!in.empty()) in.resize(rng() % in.size());
        break;
      case 4:
        if (in.size() > 2 && in.size() < 4096) in.insert(in.end(), in.begin() + 2, in.end());
        break;
      default: {
        const std::vector<uint8_t>& other = corpus[rng() % corpus.size()];
        if (other.size() > 2) in.insert(in.end(), other.begin() + 2, other.end());
        break;
      }
    }
  }
  return in;
}

}  // namespace
}  // namespace purlin::runtime::wire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  purlin::runtime::wire::run_one(data, size);
  return 0;
}

#ifndef PURLIN_LIBFUZZER
int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  using namespace purlin::runtime::wire;
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
    fs::create_directories(argv[2]);
    for (const auto& [name, bytes] : seeds()) {
      std::ofstream(fs::path(argv[2]) / name, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    return 0;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [--runs N] [--seconds S] [--seed X] | --write-seeds DIR\n", argv[0]);
    return 2;
  }
  long long runs = 100000;
  double seconds = 5;
  uint64_t seed = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt == "--runs") runs = std::atoll(argv[i + 1]);
    if (opt == "--seconds") seconds = std::atof(argv[i + 1]);
    if (opt == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 0);
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(argv[1])) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<std::vector<uint8_t>> corpus;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "fuzz: no seeds in %s\n", argv[1]);
    return 2;
  }
  for (const auto& input : corpus) LLVMFuzzerTestOneInput(input.data(), input.size());
  std::mt19937_64 rng(seed);
  const auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long long done = 0;
  for (; done < runs && std::chrono::steady_clock::now() < stop; ++done) {
    const std::vector<uint8_t> input = mutate(corpus[rng() % corpus.size()], corpus, rng);
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("fuzz: %zu seeds and %lld mutated inputs, no invariant broken\n", corpus.size(), done);
  return 0;
}
#endif
