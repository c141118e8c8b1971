#include "runtime/stall_report.h"

#include <cstdio>
#include <string>

#include "snac/fingerprint.h"
#include "snac/signal_names.h"

namespace purlin::runtime {

std::string describe_stall(const snac::StallRecord& r, const PolledWords& w) {
  if (r.mismatch != 0 && r.own == 0) {  // point-to-point: no call fingerprint, the send's bytes
    char text[200];
    std::snprintf(text, sizeof(text),
                  "point-to-point mismatch (CTA %u): a receive from rank %d does not have the byte count of "
                  "its matching send, which has %llu bytes",
                  r.worker, r.peer, static_cast<unsigned long long>(r.theirs));
    return text;
  }
  if (r.mismatch != 0) {
    char own[128];
    char theirs[128];
    snac::describe_call(own, sizeof(own), r.own);
    snac::describe_call(theirs, sizeof(theirs), r.theirs);
    char text[400];
    std::snprintf(text, sizeof(text),
                  "call mismatch (CTA %u, packet flag %llu): this rank called %s, rank %d called %s",
                  r.worker, static_cast<unsigned long long>(r.want), own, r.peer, theirs);
    return text;
  }
  const auto word = static_cast<std::uintptr_t>(r.word);
  const std::uintptr_t pair_signal_bytes = w.pair_signals.words() * sizeof(snac::Flag);
  const std::uintptr_t pair_packet_bytes = w.pair_packets.packets() * sizeof(snac::Packet);
  std::string what;
  if (word >= w.pair_signals_at && word < w.pair_signals_at + pair_signal_bytes) {
    what = snac::name_pair_signal(w.pair_signals, (word - w.pair_signals_at) / sizeof(snac::Flag));
  } else if (word >= w.pair_packets_at && word < w.pair_packets_at + pair_packet_bytes) {
    what = snac::name_pair_packet(w.pair_packets, (word - w.pair_packets_at) / sizeof(snac::Packet));
  } else {
    what = snac::name_polled_word(w.signals, w.packets, w.signals_at, w.packets_at, word);
  }
  char text[320];
  std::snprintf(text, sizeof(text), "CTA %u %s waiting for the %s to reach %llu (it held %llu)", r.worker,
                r.timed_out != 0 ? "timed out (PURLIN_TIMEOUT_S)" : "was aborted", what.c_str(),
                static_cast<unsigned long long>(r.want), static_cast<unsigned long long>(r.seen));
  std::string report = text;
  if (r.workers == 0) return report;  // a point-to-point launch does not count its CTAs' starts
  report += "; " + std::to_string(r.started) + " of the launch's " + std::to_string(r.workers) + " CTAs had started";
  if (r.started < r.workers) {
    report += " (not:";
    const std::uint64_t missing = r.missing;
    for (unsigned cta = 0; cta < 64 && cta < r.workers; ++cta) {
      if (missing >> cta & 1u) report.append(" ").append(std::to_string(cta));
    }
    report += r.workers > 64 ? " ...)" : ")";
  }
  return report;
}

}  // namespace purlin::runtime
