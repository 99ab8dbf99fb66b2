#include "core/predict/link_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/metrics/bus_bandwidth.h"

namespace tunebench::predict {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

LinkCurve from_samples(const std::map<int64_t, std::vector<double>>& by_size, LinkCurve curve) {
  for (const auto& [bytes, bws] : by_size) {
    const double bw = median(bws);
    if (bw > 0) curve.points.emplace_back(static_cast<double>(bytes), bw);
  }
  return curve;
}

}  // namespace

double LinkCurve::busbw_at(double bytes) const {
  if (points.empty()) {
    if (busbw_gbps <= 0) return 0;
    // alpha-beta: t = alpha + S/B  =>  S / t
    const double t_s = alpha_us * 1e-6 + bytes / (busbw_gbps * 1e9);
    return t_s > 0 ? bytes / t_s / 1e9 : busbw_gbps;
  }
  if (bytes <= points.front().first) return points.front().second;
  if (bytes >= points.back().first) return points.back().second;
  for (size_t i = 1; i < points.size(); ++i) {
    if (bytes > points[i].first) continue;
    const auto& [x0, y0] = points[i - 1];
    const auto& [x1, y1] = points[i];
    const double w = (std::log(bytes) - std::log(x0)) / (std::log(x1) - std::log(x0));
    return y0 + w * (y1 - y0);
  }
  return points.back().second;
}

double LinkCurve::collective_ms(protocol::Phase collective, double bytes, int world_size) const {
  const double factor = metrics::bus_factor(collective, world_size);
  if (factor <= 0 || bytes <= 0) return 0;
  // busbw_at() is the bus bandwidth of `bytes`: the collective moves bytes x factor on the bus.
  return metrics::comm_floor_ms(bytes * factor, busbw_at(bytes));
}

LinkCurve link_from_catalogue(const hardware::LinkSpec& spec) {
  LinkCurve c;
  c.id = spec.id;
  c.name = spec.name;
  c.source = "catalogue: " + spec.source;
  c.busbw_gbps = spec.busbw_gbps;
  c.alpha_us = spec.alpha_us;
  c.nccl_channels = spec.nccl_channels;
  return c;
}

LinkCurve link_from_probe(const protocol::TrialLog& probe, const std::string& label) {
  std::map<int64_t, std::vector<double>> by_size;
  for (const auto& [rank, r] : probe.ranks)
    for (const auto& p : r.probes)
      if (p.collective == protocol::Phase::AllReduce && p.busbw_gbps > 0) by_size[p.bytes].push_back(p.busbw_gbps);
  LinkCurve c;
  c.id = "measured";
  c.name = label;
  c.source = "probe '" + label + "', all-reduce at " + std::to_string(by_size.size()) + " sizes";
  return from_samples(by_size, c);
}

LinkCurve link_from_trial(const protocol::TrialLog& trial, const std::string& label) {
  std::map<int64_t, std::vector<double>> by_size;
  const int n = trial.world_size();
  for (const auto& [rank, r] : trial.ranks)
    for (const auto& s : r.steps) {
      if (s.warmup) continue;
      for (const auto& in : s.intervals) {
        if (in.lane != protocol::Lane::Comm || in.bytes <= 0 || in.duration_us() <= 0) continue;
        const double bw =
            in.busbw_gbps > 0 ? in.busbw_gbps : metrics::bus_bandwidth_gbps(in.phase, in.bytes, in.duration_us(), n);
        by_size[in.bytes].push_back(bw);
      }
    }
  LinkCurve c;
  c.id = "measured";
  c.name = label;
  c.source = "collectives of trial " + label + " (" + std::to_string(by_size.size()) + " message sizes)";
  return from_samples(by_size, c);
}

bool changes_link_path(const std::string& nccl_variable) {
  static const std::set<std::string> kPathVariables = {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",  "NCCL_IB_DISABLE",
                                                       "NCCL_NET",         "NCCL_P2P_LEVEL",    "NCCL_ALGO",
                                                       "NCCL_PROTO",       "NCCL_NET_GDR_LEVEL"};
  return kPathVariables.count(nccl_variable) > 0;
}

std::string transport_key(const std::string& device, int hosts, const std::map<std::string, std::string>& nccl_env) {
  // Bus bandwidth is comparable across rank counts (nccl-tests), so the world size is not part of it.
  std::string key = device + ", " + std::to_string(hosts) + " host(s)";
  for (const auto& [k, v] : nccl_env)
    if (changes_link_path(k)) key += ", " + k + "=" + v;
  return key;
}

std::string transport_key(const protocol::TrialLog& log) {
  std::string device;
  std::set<std::string> hosts;
  std::map<std::string, std::string> env;
  for (const auto& [rank, r] : log.ranks) {
    if (!r.hello) continue;
    if (device.empty()) device = r.hello->device;
    hosts.insert(r.hello->host);
    for (const auto& [k, v] : r.hello->env) env[k] = v;
  }
  return transport_key(device, static_cast<int>(std::max<size_t>(1, hosts.size())), env);
}

}  // namespace tunebench::predict
