// The time of one collective on an interconnect, from a link probe, from the collectives of
// measured trials, or from the catalogue.
//
// A curve is a set of (message bytes, bus bandwidth) points, interpolated linearly in log(bytes)
// and held flat beyond its ends; without points it is the alpha-beta model of the catalogue:
// t = alpha + bytes x factor / busbw. Times follow the nccl-tests definitions (core/metrics/
// bus_bandwidth.h): a collective of S bytes at bus bandwidth B takes S x factor / B, factor 2(n-1)/n
// for all-reduce and (n-1)/n for all-gather and reduce-scatter.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/hardware/hardware.h"
#include "core/protocol/events.h"
#include "core/protocol/trial_log.h"

namespace tunebench::predict {

struct LinkCurve {
  std::string id;                                 // catalogue id, or "measured"
  std::string name;                               // for people: "NVLink 4 ...", "probe of trial 9 (NCCL_P2P_DISABLE=1)"
  std::string source;                             // where the figures come from
  std::vector<std::pair<double, double>> points;  // (bytes, busbw GB/s), sorted by bytes
  double busbw_gbps = 0;                          // alpha-beta model when `points` is empty
  double alpha_us = 0;
  int nccl_channels = 0;  // SMs a running collective occupies (compute slowdown while overlapping)

  bool measured() const { return !points.empty(); }
  // Bus bandwidth a collective of `bytes` reaches on this link.
  double busbw_at(double bytes) const;
  // Milliseconds of one collective of `bytes` (nccl-tests size) among `world_size` ranks.
  double collective_ms(protocol::Phase collective, double bytes, int world_size) const;
};

LinkCurve link_from_catalogue(const hardware::LinkSpec& spec);
// From a probe's points (all-reduce only; the median busbw per size over ranks). Empty points
// when the log holds no probe.
LinkCurve link_from_probe(const protocol::TrialLog& probe, const std::string& label);
// From a training trial's own collectives: the median busbw per distinct message size over its
// measured steps (what the link achieved under that trial's load).
LinkCurve link_from_trial(const protocol::TrialLog& trial, const std::string& label);

// Whether an NCCL variable changes the path collectives take (P2P, SHM, IB, NET, algorithm,
// protocol): what a transport key keeps, and what a report names as the link.
bool changes_link_path(const std::string& nccl_variable);

// The transport a trial ran on, as far as bandwidth goes: device name, number of hosts and the
// NCCL variables that change the path (P2P, SHM, IB, NET, algorithm, protocol). Trials and probes
// with the same key ran over the same link.
std::string transport_key(const protocol::TrialLog& log);
// The same key for a machine before anything ran on it: its device name, host count and the NCCL
// variables a config sets (nccl_env).
std::string transport_key(const std::string& device, int hosts, const std::map<std::string, std::string>& nccl_env);

}  // namespace tunebench::predict
