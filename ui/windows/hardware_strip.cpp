#include "ui/windows/hardware_strip.h"

#include "core/predict/memory_explain.h"

namespace tunebench::ui {

HardwareStrip::HardwareStrip(QWidget* parent) : QLabel(parent) {
  setObjectName(QStringLiteral("hardwareStrip"));
  setWordWrap(true);
  setTextInteractionFlags(Qt::TextSelectableByMouse);
  setToolTip(QStringLiteral("Memory by category: the CUDA caching allocator's live blocks at the end of a memory-sampled "
                            "step's forward or backward, beside the prediction's terms for this configuration"));
  hide();
}

void HardwareStrip::clear() {
  m_config.reset();
  m_prediction.reset();
  m_latest.reset();
  m_reason.clear();
  m_oom.clear();
  m_options = {};
  m_deviceMemory = 0;
  QLabel::clear();
  hide();
}

void HardwareStrip::addEvents(const EventBatch& batch) {
  bool changed = false;
  for (const auto& e : batch) {
    if (e.is<protocol::Hello>() && !m_config) {
      const auto& h = e.as<protocol::Hello>();
      if (h.config.is_object() && !h.config.empty()) {
        m_config = config::from_json(h.config).config;
        m_options.cuda = h.device_kind == "cuda";
        m_options.fused_adamw = m_options.cuda && !h.torch.empty() && h.torch[0] >= '2';
        m_deviceMemory = h.device_memory_bytes;
        if (m_options.cuda) m_options.device_memory_bytes = h.device_memory_bytes;
        changed = true;
      }
    } else if (e.is<protocol::Step>()) {
      const auto& s = e.as<protocol::Step>();
      if (!s.memory_sampled) continue;
      if (!m_latest || s.step > m_latest->step ||
          (s.step == m_latest->step &&
           s.memory_categories.allocated_bytes() > m_latest->memory_categories.allocated_bytes())) {
        m_latest = s;
        m_latest->intervals.clear();
        changed = true;
      }
    } else if (e.is<protocol::Warning>()) {
      const auto& w = e.as<protocol::Warning>();
      if (w.kind == "memory-categories" && m_reason.isEmpty()) {
        m_reason = QString::fromStdString(w.message);
        changed = true;
      }
    } else if (e.is<protocol::Error>()) {
      const auto& err = e.as<protocol::Error>();
      if (err.kind != "oom" || !m_oom.isEmpty() || !m_config) continue;
      try {
        if (auto x = predict::explain_oom(*m_config, err.details, m_deviceMemory, m_options)) {
          m_oom = QString::fromStdString(x->text);
          changed = true;
        }
      } catch (const std::exception& ex) {
        m_oom = QStringLiteral("The out-of-memory record cannot be read: %1").arg(QString::fromUtf8(ex.what()));
        changed = true;
      }
    }
  }
  if (changed) refresh();
}

void HardwareStrip::refresh() {
  QStringList lines;
  if (m_latest && m_config) {
    if (!m_prediction) m_prediction = predict::predict_memory(*m_config, m_options);
    const auto cmp = predict::compare_memory(m_latest->memory_categories, *m_prediction);
    QString line = QString::fromStdString(predict::memory_line(cmp, m_latest->memory_categories.phase, m_latest->step,
                                                               m_latest->memory_categories.reserved_free_bytes));
    line[0] = line[0].toUpper();
    lines << line;
  } else if (!m_reason.isEmpty()) {
    lines << m_reason;
  }
  if (!m_oom.isEmpty()) lines << m_oom;
  setText(lines.join(QLatin1Char('\n')));
  setVisible(!lines.isEmpty());
}

}  // namespace tunebench::ui
