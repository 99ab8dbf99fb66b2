// Each collective of a multi-rank trial split into waiting for the peers and moving the bytes.
//
// Definition (docs/ANALYSIS.md, "The collective split"): ranks are aligned by measured step; the
// k-th collective of a step on each rank (comm-lane intervals in start order) is one collective when
// every rank has the same number of them with the same phase (a step where they differ is left out
// and counted). On rank 0's clock (each rank's hello clock_offset_us added):
//   arrival of rank r  = the start of its interval (when it entered the collective);
//   last rank          = the latest arrival (the lowest rank on a tie);
//   wait of rank r     = last arrival - arrival of r (sync skew: time r spent waiting for the last);
//   transfer time      = the earliest end - the last arrival (the collective with everyone there);
//   transfer bus bandwidth = bytes x bus factor / transfer time (nccl-tests; bus_bandwidth.h),
//                        bytes-weighted over the collectives with bytes and a transfer time.
// The link's peak: the catalogue's all-reduce bus bandwidth of the link NCCL uses between these
// GPUs (hardware::implied_link, the hellos' NCCL variables), when every rank is a catalogued GPU on
// one host; unknown otherwise (the CPU, several hosts). Native and imported trials alike.
// Used by trial_metrics (TrialMetrics::collectives) and the diagnosis's words (collective_split_sentence).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/trial_log.h"

namespace tunebench::analysis {

struct CollectiveSplit {
  int64_t collectives = 0;           // matched collectives over the measured steps
  int64_t steps = 0;                 // measured steps with matched collectives
  int64_t unmatched_steps = 0;       // measured steps whose ranks had different collectives
  std::string kind;                  // "all-reduce", "all-gather", ... the most frequent; "collective" when mixed
  std::vector<int64_t> last_counts;  // per rank: collectives it arrived last at
  int last_rank = -1;                // the rank most often last
  double others_wait_ms_per_step = 0;  // per step: sum over collectives of the mean wait of the non-last ranks
  double transfer_ms_per_step = 0;     // per step: sum over collectives of the transfer time
  std::optional<double> transfer_busbw_gbps;
  std::optional<double> link_busbw_gbps;  // the link's peak (catalogue), nullopt unknown
  std::string link_name;                  // the catalogue's name of that link
  // Per rank: its mean arrival after the earliest rank per collective (ms), for the views.
  std::vector<double> mean_lateness_ms;
};

// nullopt when the trial has fewer than two ranks or no matched collective.
std::optional<CollectiveSplit> collective_split(const std::vector<const protocol::TrialLog*>& repeats);

// "rank 1 arrives last in 40 of 40 all-reduces; the others wait 51.0 ms per step; the transfer itself
// runs at 0.412 GB/s (link peak unknown)"
std::string collective_split_sentence(const CollectiveSplit& s);

}  // namespace tunebench::analysis
