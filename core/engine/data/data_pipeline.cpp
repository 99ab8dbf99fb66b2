#include "core/engine/data/data_pipeline.h"

#include <stdexcept>

#include <torch/data.h>

#include "core/engine/data/token_source.h"

namespace tunebench::engine {
// Named, not anonymous: DataPipeline::Impl (external linkage) holds these types.
namespace data_pipeline_detail {

class WindowDataset : public torch::data::datasets::BatchDataset<WindowDataset, at::Tensor> {
 public:
  WindowDataset(std::shared_ptr<const TokenSource> source, int64_t samples, int64_t length, int rank, int world,
                double cpu_us, bool pin)
      : m_source(std::move(source)), m_samples(samples), m_length(length), m_rank(rank), m_world(world),
        m_cpu_us(cpu_us), m_pin(pin) {}

  at::Tensor get_batch(c10::ArrayRef<size_t> indices) override {
    at::Tensor batch = at::empty({static_cast<int64_t>(indices.size()), m_length}, at::kLong);
    int64_t* data = batch.data_ptr<int64_t>();
    uint64_t sink = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
      int64_t* row = data + static_cast<int64_t>(i) * m_length;
      const uint64_t sample_id = static_cast<uint64_t>(indices[i]) * static_cast<uint64_t>(m_world) +
                                 static_cast<uint64_t>(m_rank);
      m_source->fill(sample_id, row, m_length);
      sink ^= spend_cpu(row, m_length, m_cpu_us);
    }
    m_sink.fetch_xor(sink, std::memory_order_relaxed);
    return m_pin ? batch.pin_memory() : batch;
  }

  // c10::optional in 1.13, std::optional in 2.x: take whatever the base class declares.
  using SizeType = decltype(std::declval<const torch::data::datasets::BatchDataset<WindowDataset, at::Tensor>&>().size());
  SizeType size() const override { return static_cast<size_t>(m_samples); }

 private:
  std::shared_ptr<const TokenSource> m_source;
  int64_t m_samples;
  int64_t m_length;
  int m_rank, m_world;
  double m_cpu_us;
  bool m_pin;
  static inline std::atomic<uint64_t> m_sink{0};
};

using Sampler = torch::data::samplers::SequentialSampler;
using Loader = torch::data::StatelessDataLoader<WindowDataset, Sampler>;

}  // namespace data_pipeline_detail

struct DataPipeline::Impl {
  std::unique_ptr<data_pipeline_detail::Loader> loader;
  std::optional<torch::data::Iterator<at::Tensor>> it;
  bool started = false;
};

DataPipeline::DataPipeline(const config::TrialConfig& c, int rank, int world, int64_t batches, bool pin)
    : m_impl(std::make_unique<Impl>()) {
  const int64_t samples = batches * c.micro_batch;
  data_pipeline_detail::WindowDataset dataset(make_token_source(c), samples, c.seq_len + 1, rank, world, c.sample_cpu_us, pin);
  auto options = torch::data::DataLoaderOptions(static_cast<size_t>(c.micro_batch))
                     .workers(static_cast<size_t>(c.num_workers))
                     .max_jobs(static_cast<size_t>(2 * c.num_workers))  // 0 with no workers: libtorch 1.13 drops prefetched jobs otherwise
                     .enforce_ordering(true)
                     .drop_last(true);
  m_impl->loader = std::make_unique<data_pipeline_detail::Loader>(std::move(dataset), data_pipeline_detail::Sampler(static_cast<size_t>(samples)), options);
}

DataPipeline::~DataPipeline() = default;

at::Tensor DataPipeline::next() {
  Impl& d = *m_impl;
  try {
    if (!d.started) {
      d.it.emplace(d.loader->begin());
      d.started = true;
    } else {
      ++*d.it;
    }
    if (*d.it == d.loader->end()) throw std::out_of_range("data pipeline exhausted");
    return **d.it;
  } catch (const torch::data::WorkerException& e) {
    // A loader thread failed: rethrow what it threw, so a token id beyond the vocabulary is the
    // same config error (exit 2) with loader threads as without, and an allocation failure an OOM.
    std::rethrow_exception(e.original_exception);
  }
}

}  // namespace tunebench::engine
