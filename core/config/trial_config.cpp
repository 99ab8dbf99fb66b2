// JSON mapping, text setters and comparison of TrialConfig. One table (fields()) lists every key
// once; to_json, from_json, set_knob and differing_knobs all walk it.
#include "core/config/trial_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/config/script.h"

namespace tunebench::config {
namespace {

using nlohmann::json;

// ---- enum names ----------------------------------------------------------------------------

template <class E> struct EnumNames;
#define TUNEBENCH_ENUM_NAMES(E, ...)                                         \
  template <> struct EnumNames<E> {                                          \
    static constexpr std::string_view names[] = {__VA_ARGS__};               \
  };
TUNEBENCH_ENUM_NAMES(Strategy, "single", "ddp", "fsdp")
TUNEBENCH_ENUM_NAMES(Device, "auto", "cpu", "cuda")
TUNEBENCH_ENUM_NAMES(Amp, "fp32", "tf32", "bf16", "fp16", "pure-bf16", "fp8")
TUNEBENCH_ENUM_NAMES(Compile, "off", "fused", "graph", "fused+graph", "torch")
TUNEBENCH_ENUM_NAMES(Attention, "auto", "flash", "cudnn", "efficient", "math")
TUNEBENCH_ENUM_NAMES(DataSource, "synthetic", "file")
TUNEBENCH_ENUM_NAMES(TokenDtype, "uint16", "uint32")
TUNEBENCH_ENUM_NAMES(Optimizer, "adamw", "sgd")
TUNEBENCH_ENUM_NAMES(Compression, "none", "fp16", "bf16")
TUNEBENCH_ENUM_NAMES(FsdpMode, "full_shard", "shard_grad_op")
TUNEBENCH_ENUM_NAMES(DType, "fp32", "bf16", "fp16")
TUNEBENCH_ENUM_NAMES(Launcher, "local", "ssh", "slurm")
TUNEBENCH_ENUM_NAMES(SlurmMode, "srun", "sbatch")
#undef TUNEBENCH_ENUM_NAMES

template <class E> std::string_view enum_name(E v) {
  const auto i = static_cast<size_t>(v);
  return i < std::size(EnumNames<E>::names) ? EnumNames<E>::names[i] : std::string_view("?");
}

template <class E> E enum_from(const json& j) {
  const std::string s = j.get<std::string>();
  const auto& names = EnumNames<E>::names;
  for (size_t i = 0; i < std::size(names); ++i)
    if (names[i] == s) return static_cast<E>(i);
  std::string allowed;
  for (auto n : names) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("'" + s + "' is not one of " + allowed);
}

// ---- the field table -----------------------------------------------------------------------

struct Field {
  const char* key;
  std::function<json(const TrialConfig&)> get;
  std::function<void(TrialConfig&, const json&)> set;  // throws on wrong type or value
};

template <class T> Field plain(const char* key, T TrialConfig::*member) {
  return {key, [member](const TrialConfig& c) { return json(c.*member); },
          [member](TrialConfig& c, const json& j) {
            if constexpr (std::is_same_v<T, bool>) {
              if (!j.is_boolean()) throw std::invalid_argument("expected true or false");
            } else if constexpr (std::is_integral_v<T>) {
              if (!j.is_number_integer()) throw std::invalid_argument("expected an integer");
              if constexpr (std::is_unsigned_v<T>) {
                if (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() < 0)
                  throw std::invalid_argument("expected a non-negative integer");
              } else {
                // get<T>() would wrap: 4294967297 as an int is 1, 2^63 as an int64 negative.
                const bool fits = j.is_number_unsigned()
                                      ? j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
                                      : j.get<int64_t>() >= std::numeric_limits<T>::min() &&
                                            j.get<int64_t>() <= std::numeric_limits<T>::max();
                if (!fits) throw std::invalid_argument(j.dump() + " is out of range");
              }
            } else if constexpr (std::is_floating_point_v<T>) {
              if (!j.is_number()) throw std::invalid_argument("expected a number");
              if (!std::isfinite(j.get<T>())) throw std::invalid_argument("expected a finite number");
            } else {
              if (!j.is_string()) throw std::invalid_argument("expected a string");
            }
            c.*member = j.get<T>();
          }};
}

template <class E> Field enumerated(const char* key, E TrialConfig::*member) {
  return {key, [member](const TrialConfig& c) { return json(enum_name(c.*member)); },
          [member](TrialConfig& c, const json& j) {
            if (!j.is_string()) throw std::invalid_argument("expected a string");
            c.*member = enum_from<E>(j);
          }};
}

Field dim_field(const char* key, int64_t ModelDims::*member) {
  return {key, [member](const TrialConfig& c) { return json(c.dims.*member); },
          [member](TrialConfig& c, const json& j) {
            if (!j.is_number_integer()) throw std::invalid_argument("expected an integer");
            if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
              throw std::invalid_argument(j.dump() + " is out of range");
            c.dims.*member = j.get<int64_t>();
          }};
}

Field dim_flag(const char* key, bool ModelDims::*member) {
  return {key, [member](const TrialConfig& c) { return json(c.dims.*member); },
          [member](TrialConfig& c, const json& j) {
            if (!j.is_boolean()) throw std::invalid_argument("expected true or false");
            c.dims.*member = j.get<bool>();
          }};
}

Field dim_number(const char* key, double ModelDims::*member) {
  return {key, [member](const TrialConfig& c) { return json(c.dims.*member); },
          [member](TrialConfig& c, const json& j) {
            if (!j.is_number()) throw std::invalid_argument("expected a number");
            if (!std::isfinite(j.get<double>())) throw std::invalid_argument("expected a finite number");
            c.dims.*member = j.get<double>();
          }};
}

std::map<std::string, std::string> string_map(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected an object of NAME: value strings");
  std::map<std::string, std::string> env;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string() && !it.value().is_number())
      throw std::invalid_argument("value of " + it.key() + " must be a string");
    env[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
  }
  return env;
}

json ssh_hosts_json(const std::vector<SshHost>& hosts) {
  json out = json::array();
  for (const auto& h : hosts) {
    json o = {{"host", h.host}, {"ranks", h.ranks}};
    if (!h.user.empty()) o["user"] = h.user;
    if (h.port != 0) o["port"] = h.port;
    if (!h.worker.empty()) o["worker"] = h.worker;
    if (!h.env.empty()) o["env"] = h.env;
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<SshHost> ssh_hosts_from_json(const json& j) {
  if (j.is_string()) {  // the text form is accepted in JSON too (hand-written configs)
    std::vector<SshHost> hosts;
    if (auto p = parse_ssh_hosts(j.get<std::string>(), hosts)) throw std::invalid_argument(p->message);
    return hosts;
  }
  if (!j.is_array()) throw std::invalid_argument("expected an array of {host, user, port, ranks, worker, env}");
  std::vector<SshHost> hosts;
  for (const auto& o : j) {
    if (!o.is_object() || !o.contains("host") || !o["host"].is_string())
      throw std::invalid_argument("every SSH host needs a \"host\" string");
    SshHost h;
    for (auto it = o.begin(); it != o.end(); ++it) {
      const auto& k = it.key();
      const auto& v = it.value();
      if (k == "host") h.host = v.get<std::string>();
      else if (k == "user" && v.is_string()) h.user = v.get<std::string>();
      else if (k == "worker" && v.is_string()) h.worker = v.get<std::string>();
      else if (k == "port" && v.is_number_integer()) h.port = v.get<int>();
      else if (k == "ranks" && v.is_number_integer()) h.ranks = v.get<int>();
      else if (k == "env") h.env = string_map(v);
      else throw std::invalid_argument("SSH host field '" + k + "' is unknown or has the wrong type");
    }
    hosts.push_back(std::move(h));
  }
  return hosts;
}

// "tiny, 125m, ..., custom" for messages.
std::string preset_list() {
  std::string out;
  for (const auto& n : model_preset_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      plain("name", &TrialConfig::name),
      {"model", [](const TrialConfig& c) { return json(c.model); },
       [](TrialConfig& c, const json& j) {
         if (!j.is_string()) throw std::invalid_argument("expected a string");
         const std::string name = j.get<std::string>();
         if (name != "custom") {
           const auto dims = model_preset(name);
           if (!dims) throw std::invalid_argument("unknown model preset '" + name + "' (" + preset_list() + ")");
           c.dims = *dims;
         }
         c.model = name;
       }},
      dim_field("dim", &ModelDims::dim),
      dim_field("layers", &ModelDims::layers),
      dim_field("heads", &ModelDims::heads),
      dim_field("ffn", &ModelDims::ffn),
      dim_field("vocab", &ModelDims::vocab),
      dim_field("kv_heads", &ModelDims::kv_heads),
      dim_flag("tie_embeddings", &ModelDims::tie_embeddings),
      dim_number("rope_theta", &ModelDims::rope_theta),
      plain("micro_batch", &TrialConfig::micro_batch),
      plain("seq_len", &TrialConfig::seq_len),
      plain("grad_accum", &TrialConfig::grad_accum),
      enumerated("data", &TrialConfig::data),
      plain("data_path", &TrialConfig::data_path),
      enumerated("token_dtype", &TrialConfig::token_dtype),
      plain("num_workers", &TrialConfig::num_workers),
      plain("pin_memory", &TrialConfig::pin_memory),
      plain("sample_cpu_us", &TrialConfig::sample_cpu_us),
      enumerated("strategy", &TrialConfig::strategy),
      plain("world_size", &TrialConfig::world_size),
      enumerated("device", &TrialConfig::device),
      enumerated("amp", &TrialConfig::amp),
      plain("cudnn_benchmark", &TrialConfig::cudnn_benchmark),
      plain("checkpointing", &TrialConfig::checkpointing),
      // Older sessions stored a bool: true was the CUDA graph, the only "compile" there was.
      {"compile", [](const TrialConfig& c) { return json(enum_name(c.compile)); },
       [](TrialConfig& c, const json& j) {
         if (j.is_boolean())
           c.compile = j.get<bool>() ? Compile::Graph : Compile::Off;
         else if (j.is_string())
           c.compile = enum_from<Compile>(j);
         else
           throw std::invalid_argument("expected one of off, fused, graph, fused+graph, torch");
       }},
      enumerated("attention", &TrialConfig::attention),
      enumerated("optimizer", &TrialConfig::optimizer),
      plain("fused_optimizer", &TrialConfig::fused_optimizer),
      plain("lr", &TrialConfig::lr),
      plain("weight_decay", &TrialConfig::weight_decay),
      plain("grad_clip", &TrialConfig::grad_clip),
      plain("optimizer_overlap", &TrialConfig::optimizer_overlap),
      enumerated("grad_dtype", &TrialConfig::grad_dtype),
      plain("bucket_mb", &TrialConfig::bucket_mb),
      plain("first_bucket_mb", &TrialConfig::first_bucket_mb),
      plain("ddp_overlap", &TrialConfig::ddp_overlap),
      enumerated("compression", &TrialConfig::compression),
      enumerated("fsdp_mode", &TrialConfig::fsdp_mode),
      plain("fsdp_prefetch", &TrialConfig::fsdp_prefetch),
      enumerated("fsdp_param_dtype", &TrialConfig::fsdp_param_dtype),
      enumerated("fsdp_reduce_dtype", &TrialConfig::fsdp_reduce_dtype),
      {"nccl_env", [](const TrialConfig& c) { return json(c.nccl_env); },
       [](TrialConfig& c, const json& j) { c.nccl_env = string_map(j); }},
      plain("steps", &TrialConfig::steps),
      plain("warmup", &TrialConfig::warmup),
      plain("seed", &TrialConfig::seed),
      plain("timing", &TrialConfig::timing),
      plain("kernel_sample_every", &TrialConfig::kernel_sample_every),
      plain("kernel_sample_steps", &TrialConfig::kernel_sample_steps),
      plain("gpu_sample_hz", &TrialConfig::gpu_sample_hz),
      plain("rendezvous_timeout_s", &TrialConfig::rendezvous_timeout_s),
      plain("collective_timeout_s", &TrialConfig::collective_timeout_s),
      enumerated("launcher", &TrialConfig::launcher),
      // Stored as an array of objects; the form and --set use the text form (set_knob below).
      {"ssh_hosts", [](const TrialConfig& c) { return ssh_hosts_json(c.ssh_hosts); },
       [](TrialConfig& c, const json& j) { c.ssh_hosts = ssh_hosts_from_json(j); }},
      plain("ssh_command", &TrialConfig::ssh_command),
      plain("master_addr", &TrialConfig::master_addr),
      plain("remote_worker", &TrialConfig::remote_worker),
      {"remote_env", [](const TrialConfig& c) { return json(c.remote_env); },
       [](TrialConfig& c, const json& j) { c.remote_env = string_map(j); }},
      enumerated("slurm_mode", &TrialConfig::slurm_mode),
      plain("slurm_nodes", &TrialConfig::slurm_nodes),
      plain("slurm_gpus_per_node", &TrialConfig::slurm_gpus_per_node),
      plain("slurm_partition", &TrialConfig::slurm_partition),
      plain("slurm_account", &TrialConfig::slurm_account),
      plain("slurm_time", &TrialConfig::slurm_time),
      plain("slurm_dir", &TrialConfig::slurm_dir),
      plain("event_host", &TrialConfig::event_host),
      plain("script", &TrialConfig::script),
      plain("script_args", &TrialConfig::script_args),
      plain("python", &TrialConfig::python),
      // An array of knob keys; the form and --set use the text form "num_workers,pin_memory".
      {"script_knobs", [](const TrialConfig& c) { return json(c.script_knobs); },
       [](TrialConfig& c, const json& j) {
         if (!j.is_array()) throw std::invalid_argument("expected a list of knob names");
         std::vector<std::string> keys;
         for (const auto& k : j) {
           if (!k.is_string()) throw std::invalid_argument("expected a list of knob names");
           keys.push_back(k.get<std::string>());
         }
         c.script_knobs = std::move(keys);
       }},
      plain("persistent_workers", &TrialConfig::persistent_workers),
      plain("prefetch_factor", &TrialConfig::prefetch_factor),
      plain("gradient_as_bucket_view", &TrialConfig::gradient_as_bucket_view),
      plain("static_graph", &TrialConfig::static_graph),
      plain("step_timeout_s", &TrialConfig::step_timeout_s),
      plain("script_batch_unit", &TrialConfig::script_batch_unit),  // recorded by the probe, not a knob
      plain("samples_per_step", &TrialConfig::samples_per_step),
  };
  return table;
}

const Field* find_field(std::string_view key) {
  for (const auto& f : fields())
    if (key == f.key) return &f;
  return nullptr;
}

// True when `s` begins with an environment variable name followed by '=' ("NCCL_ALGO=").
bool starts_with_env_name(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  return n > 0 && n < s.size() && s[n] == '=' && !std::isdigit(static_cast<unsigned char>(s[0]));
}

std::optional<bool> parse_bool(std::string_view s) {
  if (s == "true" || s == "1" || s == "on" || s == "yes") return true;
  if (s == "false" || s == "0" || s == "off" || s == "no") return false;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Strategy v) { return enum_name(v); }
std::string_view to_string(Device v) { return enum_name(v); }
std::string_view to_string(Amp v) { return enum_name(v); }
std::string_view to_string(Compile v) { return enum_name(v); }
std::string_view to_string(Attention v) { return enum_name(v); }
std::string_view to_string(DataSource v) { return enum_name(v); }
std::string_view to_string(TokenDtype v) { return enum_name(v); }
std::string_view to_string(Optimizer v) { return enum_name(v); }
std::string_view to_string(Compression v) { return enum_name(v); }
std::string_view to_string(FsdpMode v) { return enum_name(v); }
std::string_view to_string(DType v) { return enum_name(v); }
std::string_view to_string(Launcher v) { return enum_name(v); }
std::string_view to_string(SlurmMode v) { return enum_name(v); }

std::string device_noun(bool on_gpu, bool plural) { return std::string(on_gpu ? "GPU" : "CPU rank") + (plural ? "s" : ""); }

std::optional<Problem> parse_ssh_hosts(std::string_view text, std::vector<SshHost>& out) {
  out.clear();
  auto bad = [](std::string message) { return Problem{"ssh_hosts", std::move(message)}; };
  std::string all(text);
  for (char& ch : all)
    if (ch == '\n') ch = ';';
  std::stringstream hosts(all);
  std::string item;
  while (std::getline(hosts, item, ';')) {
    std::stringstream words(item);
    std::string word;
    if (!(words >> word)) continue;  // empty entries are allowed ("a; b;")
    SshHost h;
    std::string address = word;
    if (const auto at = address.find('@'); at != std::string::npos) {
      h.user = address.substr(0, at);
      address = address.substr(at + 1);
      if (h.user.empty()) return bad("'" + word + "' has an empty user name");
    }
    // host:port, but a bare IPv6 address ("::1") is taken whole; "[::1]:2222" has a port.
    if (!address.empty() && address.front() == '[') {
      const auto close = address.find(']');
      if (close == std::string::npos) return bad("'" + word + "' lacks the closing ']'");
      std::string rest = address.substr(close + 1);
      address = address.substr(1, close - 1);
      if (!rest.empty()) {
        if (rest.front() != ':') return bad("'" + word + "': expected ':port' after ']'");
        try {
          h.port = std::stoi(rest.substr(1));
        } catch (...) {
          return bad("'" + word + "' has a bad port");
        }
      }
    } else if (const auto colon = address.find(':');
               colon != std::string::npos && address.find(':', colon + 1) == std::string::npos) {
      const std::string port = address.substr(colon + 1);
      address = address.substr(0, colon);
      char* end = nullptr;
      const long p = std::strtol(port.c_str(), &end, 10);
      if (port.empty() || *end != '\0') return bad("'" + word + "' has a bad port '" + port + "'");
      h.port = int(p);
    }
    if (address.empty()) return bad("'" + word + "' has no host name");
    if (h.port < 0 || h.port > 65535) return bad("'" + word + "': port must be between 1 and 65535");
    h.host = address;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos || eq == 0)
        return bad("'" + word + "' after " + h.host + " is not ranks=N, worker=PATH or NAME=value");
      const std::string k = word.substr(0, eq), v = word.substr(eq + 1);
      if (k == "ranks" || k == "gpus") {
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 1 || n > 1024) return bad("ranks of " + h.host + " must be 1 to 1024");
        h.ranks = int(n);
      } else if (k == "worker") {
        h.worker = v;
      } else {
        h.env[k] = v;
      }
    }
    out.push_back(std::move(h));
  }
  return std::nullopt;
}

std::string format_ssh_hosts(const std::vector<SshHost>& hosts) {
  std::string out;
  for (const auto& h : hosts) {
    if (!out.empty()) out += "; ";
    if (!h.user.empty()) out += h.user + "@";
    const bool v6 = h.host.find(':') != std::string::npos;
    out += (v6 && h.port ? "[" + h.host + "]" : h.host);
    if (h.port) out += ":" + std::to_string(h.port);
    out += " ranks=" + std::to_string(h.ranks);
    if (!h.worker.empty()) out += " worker=" + h.worker;
    for (const auto& [k, v] : h.env) out += " " + k + "=" + v;
  }
  return out;
}

int launcher_ranks(const TrialConfig& config) {
  if (config.launcher != Launcher::Ssh) return config.world_size;
  int n = 0;
  for (const auto& h : config.ssh_hosts) n += h.ranks;
  return n;
}

bool TrialConfig::operator==(const TrialConfig& o) const { return to_json(*this) == to_json(o); }

json to_json(const TrialConfig& config) {
  json j = json::object();
  for (const auto& f : fields()) j[f.key] = f.get(config);
  return j;
}

ParseResult from_json(const json& j, const TrialConfig& base) {
  ParseResult result{base, {}};
  if (!j.is_object()) {
    result.problems.push_back({"", "a trial configuration must be a JSON object"});
    return result;
  }
  // "model" first: a preset sets the dims, and explicit dims given beside it then override.
  auto apply = [&](const Field& f, const json& value) {
    try {
      f.set(result.config, value);
    } catch (const std::exception& e) {
      result.problems.push_back({f.key, e.what()});
    }
  };
  if (auto it = j.find("model"); it != j.end()) apply(*find_field("model"), *it);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "model") continue;
    const Field* f = find_field(it.key());
    if (!f) {
      result.problems.push_back({it.key(), "unknown key '" + it.key() + "'"});
      continue;
    }
    apply(*f, it.value());
  }
  return result;
}

std::optional<Problem> set_knob(TrialConfig& config, std::string_view key, std::string_view text) {
  const Field* f = find_field(key);
  const KnobInfo* info = find_knob(key);
  if (!f || !info) return Problem{std::string(key), "unknown knob '" + std::string(key) + "'"};
  const std::string s(text);
  json value;
  auto bad = [&](const char* what) {
    return Problem{std::string(key), "'" + s + "' is not " + what};
  };
  switch (info->type) {
    case KnobType::Int: {
      errno = 0;
      char* end = nullptr;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0') return bad("an integer");
      if (errno == ERANGE) {  // beyond int64: only the unsigned seed can hold it
        errno = 0;
        const unsigned long long u = std::strtoull(s.c_str(), &end, 10);
        if (s[0] == '-' || errno == ERANGE) return bad("an integer in range");
        value = static_cast<uint64_t>(u);
      } else {
        value = static_cast<int64_t>(v);
      }
      break;
    }
    case KnobType::Float: {
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || errno == ERANGE) return bad("a number");
      value = v;
      break;
    }
    case KnobType::Bool: {
      const auto b = parse_bool(s);
      if (!b) return bad("true or false");
      value = *b;
      break;
    }
    case KnobType::Map: {
      // "NAME=value,NAME=value"; an empty text clears the map. A comma starts a new pair only
      // when a NAME= follows it, so NCCL_SOCKET_IFNAME=eth0,eth1 keeps its list.
      value = json::object();
      std::vector<std::string> items(1);
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == ',' && starts_with_env_name(std::string_view(s).substr(i + 1)))
          items.emplace_back();
        else
          items.back() += s[i];
      }
      for (const auto& item : items) {
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0) return bad("a list of NAME=value pairs");
        value[item.substr(0, eq)] = item.substr(eq + 1);
      }
      break;
    }
    case KnobType::Choice:
    case KnobType::Text: value = s; break;
  }
  if (key == "ssh_hosts") {  // the text form; parse_ssh_hosts reports the problem
    std::vector<SshHost> hosts;
    if (auto p = parse_ssh_hosts(s, hosts)) return p;
    config.ssh_hosts = std::move(hosts);
    return std::nullopt;
  }
  if (key == "script_knobs") {  // "num_workers,pin_memory"; validate() checks the names
    config.script_knobs.clear();
    std::string item;
    for (size_t i = 0; i <= s.size(); ++i) {
      if (i == s.size() || s[i] == ',') {
        while (!item.empty() && item.back() == ' ') item.pop_back();
        if (!item.empty()) config.script_knobs.push_back(item);
        item.clear();
      } else if (s[i] != ' ' || !item.empty()) {
        item += s[i];
      }
    }
    return std::nullopt;
  }
  try {
    f->set(config, value);
  } catch (const std::exception& e) {
    return Problem{std::string(key), e.what()};
  }
  // A knob set on a script trial (a --set, a sweep's axis, a suggestion) is applied to the script.
  apply_to_script(config, key);
  return std::nullopt;
}

std::string knob_text(const TrialConfig& config, std::string_view key) {
  const Field* f = find_field(key);
  if (!f) return {};
  if (key == "ssh_hosts") return format_ssh_hosts(config.ssh_hosts);
  if (key == "script_knobs") {
    std::string out;
    for (const auto& k : config.script_knobs) out += (out.empty() ? "" : ",") + k;
    return out;
  }
  const json v = f->get(config);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object()) {
    std::string out;
    for (auto it = v.begin(); it != v.end(); ++it)
      out += (out.empty() ? "" : ",") + it.key() + "=" + it.value().get<std::string>();
    return out;
  }
  return v.dump();
}

std::vector<std::string> differing_knobs(const TrialConfig& a, const TrialConfig& b) {
  std::vector<std::string> keys;
  for (const auto& f : fields())
    if (std::string_view(f.key) != "name" && f.get(a) != f.get(b)) keys.emplace_back(f.key);
  return keys;
}

}  // namespace tunebench::config
