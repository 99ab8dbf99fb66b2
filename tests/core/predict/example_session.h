// The example session's trials (sessions/h200-7b.tbsession) as prediction evidence: what
// `tunebench-cli predict --evidence sessions/h200-7b.tbsession` calibrates on. Needs the store
// (TUNEBENCH_HAVE_STORE).
#pragma once

#include <memory>
#include <string>

#include "core/predict/evidence.h"
#include "core/store/session_store.h"

namespace tunebench::predict::testing {

inline void add_example_session(Evidence& evidence) {
  store::SessionStore::OpenOptions ro;
  ro.mode = store::SessionStore::Mode::ReadOnly;
  const auto session = store::SessionStore::open(std::string(TUNEBENCH_SESSIONS_DIR) + "/h200-7b.tbsession", ro);
  for (const auto& info : session.list_trials()) {
    auto loaded = session.load_trial(info.id);
    evidence.add(info.name, std::make_shared<protocol::TrialLog>(std::move(loaded.log)));
  }
}

}  // namespace tunebench::predict::testing
