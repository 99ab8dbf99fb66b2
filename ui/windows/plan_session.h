// The session connection of the plan windows (InvestigateWindow, AutotuneDialog): a short-lived
// read-write store on the GUI thread for a plan's single-row reads and writes, without the
// integrity check (the session file was checked when it was opened).
#pragma once

#include <QString>

#include "core/store/session_store.h"

namespace tunebench::ui {

inline store::SessionStore open_plan_session(const QString& path) {
  store::SessionStore::OpenOptions o;
  o.check_integrity = false;
  return store::SessionStore::open(path.toStdString(), o);
}

}  // namespace tunebench::ui
