#include "core/engine/comm/rendezvous.h"

#include <unistd.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"
#include "core/engine/errors.h"

namespace tunebench::engine {
namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string text_of(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

// "" when `theirs` runs what `ours` (rank 0's) runs, else "dim 128 vs 64, layers 4 vs 2".
std::string config_difference(const std::string& ours_json, const std::string& theirs_json) {
  const auto ours = nlohmann::json::parse(ours_json, nullptr, false);
  const auto theirs = nlohmann::json::parse(theirs_json, nullptr, false);
  if (ours.is_discarded() || theirs.is_discarded()) return "an unreadable configuration";
  const auto a = config::from_json(ours).config;
  const auto b = config::from_json(theirs).config;
  std::string out;
  int listed = 0;
  const auto keys = config::differing_knobs(a, b);
  for (const auto& key : keys) {
    if (listed == 3) {
      out += " and " + std::to_string(keys.size() - 3) + " more";
      break;
    }
    out += (listed++ ? ", " : "") + key + " " + config::knob_text(b, key) + " vs " + config::knob_text(a, key);
  }
  return out;
}

}  // namespace

Rendezvous rendezvous(const RendezvousInfo& info) {
  const auto deadline = std::chrono::steady_clock::now() + info.timeout;
  auto fail = [&](const std::string& what) {
    return EngineError("rendezvous", protocol::kExitCommunication,
                       "rendezvous at " + info.master_addr + ":" + std::to_string(info.master_port) + " failed: " + what,
                       {{"world_size", info.world_size}, {"rank", info.rank}});
  };
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(info.master_port);
  opts.isServer = info.rank == 0;
  opts.numWorkers = static_cast<std::size_t>(info.world_size);
  opts.waitWorkers = false;  // we count arrivals ourselves, to say how many came
  opts.timeout = info.timeout;
  Rendezvous rv;
  try {
    rv.store = c10::make_intrusive<c10d::TCPStore>(info.master_addr, opts);
  } catch (const std::exception& e) {
    throw fail(info.rank == 0 ? std::string("cannot host the store: ") + e.what()
                              : std::string("cannot reach rank 0's store: ") + e.what());
  }
  // Counted arrival: every rank adds 1, then waits for the total.
  int64_t arrived = 0;
  std::string verdict;
  try {
    arrived = rv.store->add("tunebench/arrived", 1);
    while (arrived < info.world_size) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      arrived = rv.store->add("tunebench/arrived", 0);
    }
    if (arrived < info.world_size)
      throw fail("only " + std::to_string(arrived) + " of " + std::to_string(info.world_size) +
                 " ranks arrived within " + std::to_string(info.timeout.count() / 1000) + " s");
    // Every rank says who it is and what it runs; rank 0 compares and publishes one verdict, so all
    // ranks stop with the same sentence instead of failing later inside a collective.
    const nlohmann::json me = {
        {"host", info.host}, {"pid", static_cast<int64_t>(::getpid())}, {"config", info.config_json}};
    rv.store->set("tunebench/rank/" + std::to_string(info.rank), bytes_of(me.dump()));
    if (info.rank == 0) {
      nlohmann::json peers = nlohmann::json::array();
      std::string problem;
      for (int r = 0; r < info.world_size; ++r) {
        const auto other = nlohmann::json::parse(text_of(rv.store->get("tunebench/rank/" + std::to_string(r))));
        peers.push_back({other.at("host"), other.at("pid")});
        if (problem.empty()) {
          const std::string diff = config_difference(info.config_json, other.at("config").get<std::string>());
          if (!diff.empty())
            problem = "rank " + std::to_string(r) + " runs a different configuration than rank 0: " + diff +
                      ". Start every rank with the same flags and configuration file.";
        }
      }
      rv.store->set("tunebench/verdict", bytes_of(nlohmann::json{{"problem", problem}, {"peers", peers}}.dump()));
    }
    const auto v = nlohmann::json::parse(text_of(rv.store->get("tunebench/verdict")));
    verdict = v.at("problem").get<std::string>();
    for (const auto& p : v.at("peers")) rv.peers.push_back({p.at(0).get<std::string>(), p.at(1).get<int64_t>()});
    // Rank 0 hosts the store: when the verdict stops every rank, it must not exit (taking the store
    // with it) before the others have read the verdict, or they see "Broken pipe" instead of it.
    rv.store->add("tunebench/verdict_read", 1);
    if (info.rank == 0 && !verdict.empty())
      while (rv.store->add("tunebench/verdict_read", 0) < info.world_size &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (const EngineError&) {
    throw;
  } catch (const std::exception& e) {
    throw fail(std::string("store connection lost: ") + e.what());
  }
  if (!verdict.empty()) throw EngineError("config", protocol::kExitConfig, verdict);
  return rv;
}

}  // namespace tunebench::engine
