#include "train/distributed.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "core/text.h"
#include "train/rendezvous_file.h"

#if MASKPRIOR_HAVE_GLOO && defined(USE_C10D_GLOO)
#define MASKPRIOR_GLOO 1
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#if MASKPRIOR_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace maskprior::training {

namespace {

using std::chrono::milliseconds;

/// An integer environment variable in [low, high]; nullopt when unset.
std::optional<int> env_int(const char* name, int low, int high) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < low || value > high) {
    throw InputError(fmt::format("environment variable {}='{}': expected an integer in {}..{}",
                                 name, text, low, high));
  }
  return static_cast<int>(value);
}

/// A number of seconds from an environment variable, in the forms and range `--dist-timeout`
/// takes (a decimal number from kMinTimeout to kMaxTimeout); nullopt when unset.
std::optional<double> env_seconds(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value) || value < kMinTimeoutSeconds ||
      value > kMaxTimeoutSeconds) {
    throw InputError(
        fmt::format("environment variable {}='{}': expected seconds, a number from {} to {}", name,
                    text, kMinTimeoutSeconds, kMaxTimeoutSeconds));
  }
  return value;
}

std::string env_text(const char* name, const std::string& fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::string(text) : fallback;
}

constexpr int kMaxRanks = 1 << 20;

}  // namespace

std::optional<World> world_from_environment() {
  World world;
  const auto rank = env_int("RANK", 0, kMaxRanks);
  const auto slurm_rank = std::getenv("SLURM_STEP_NUM_TASKS") != nullptr
                              ? env_int("SLURM_PROCID", 0, kMaxRanks)
                              : std::nullopt;
  if (!rank && !slurm_rank) {
    // torchrun and `maskc launch` set both: WORLD_SIZE alone is a launcher that forgot RANK, and
    // running as a world of one would train the whole job in every process.
    if (const char* size = std::getenv("WORLD_SIZE"); size != nullptr && *size != '\0') {
      throw InputError(fmt::format(
          "environment variable WORLD_SIZE='{}' is set but RANK is not: set both (as torchrun "
          "and `maskc launch` do), or neither for a single process",
          size));
    }
    return std::nullopt;
  }
  if (rank) {
    world.rank = *rank;
    world.size = env_int("WORLD_SIZE", 1, kMaxRanks).value_or(1);
    world.local_rank = env_int("LOCAL_RANK", 0, kMaxRanks).value_or(0);
    world.local_size = env_int("LOCAL_WORLD_SIZE", 1, kMaxRanks).value_or(1);
  } else {  // srun's variables of the job step (a batch script's own shell has none of them)
    world.rank = *slurm_rank;
    world.size = env_int("SLURM_STEP_NUM_TASKS", 1, kMaxRanks).value_or(1);
    world.local_rank = env_int("SLURM_LOCALID", 0, kMaxRanks).value_or(0);
    // "4" or "4(x2)" or "4,2": this machine's count is not always the first; it only shares
    // cores out, so the leading number will do.
    world.local_size = std::max(1, std::atoi(env_text("SLURM_STEP_TASKS_PER_NODE", "1").c_str()));
  }
  world.master_addr = env_text("MASTER_ADDR", world.master_addr);
  world.master_port = env_int("MASTER_PORT", 1, 65535).value_or(world.master_port);
  if (const auto timeout = env_seconds("MASKC_DIST_TIMEOUT")) world.timeout_seconds = *timeout;
  world.rendezvous_file = env_text("MASKC_RENDEZVOUS_FILE", "");
  check_world(world);
  return world;
}

void check_world(const World& world) {
  if (world.size < 1 || world.rank < 0 || world.rank >= world.size) {
    throw InputError(fmt::format("rank {} is not in a world of size {} (0 <= rank < size)",
                                 world.rank, world.size));
  }
  if (world.master_port < 1 || world.master_port > 65535) {
    throw InputError(fmt::format("master port {} is not in 1..65535", world.master_port));
  }
  if (!(world.timeout_seconds >= kMinTimeoutSeconds &&
        world.timeout_seconds <= kMaxTimeoutSeconds)) {
    throw InputError(fmt::format("distributed timeout {} s is not in {}..{} s",
                                 world.timeout_seconds, kMinTimeoutSeconds, kMaxTimeoutSeconds));
  }
  check_master_address(world.master_addr);
}

void check_master_address(const std::string& address) {
  const auto refuse = [&](const std::string& why) {
    throw InputError(fmt::format("master address '{}' (MASTER_ADDR / --master-addr) {}",
                                 printable_utf8(address), why));
  };
  if (address.empty()) refuse("is empty");
  if (address.size() > 253) refuse("is longer than a host name can be (253 characters)");
  in6_addr ipv6{};
  in_addr ipv4{};
  if (address.find(':') != std::string::npos) {
    if (::inet_pton(AF_INET6, address.c_str(), &ipv6) != 1) refuse("is not an IPv6 address");
    return;
  }
  // All digits and dots: meant as an IPv4 address, so it must be one (999.1.1.1 is not).
  if (address.find_first_not_of("0123456789.") == std::string::npos) {
    if (::inet_pton(AF_INET, address.c_str(), &ipv4) != 1) refuse("is not an IPv4 address");
    return;
  }
  // A host name: labels of letters, digits, hyphens (and underscores, which some /etc/hosts
  // names have), 1 to 63 characters, split by dots.
  size_t start = 0;
  while (start <= address.size()) {
    size_t end = address.find('.', start);
    if (end == std::string::npos) end = address.size();
    const std::string_view label(address.data() + start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-' ||
        label.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
            std::string_view::npos) {
      refuse("is neither an IP address nor a host name (letters, digits, '-', '_' and '.')");
    }
    start = end + 1;
  }
}

namespace {

bool is_loopback(const std::string& address) {
  return address == "localhost" || address.starts_with("127.") || address == "::1";
}

}  // namespace

std::string rendezvous_file_of(const World& world) {
  if (!world.rendezvous_file.empty()) {
    check_rendezvous_path(world.rendezvous_file);
    return world.rendezvous_file;
  }
  if (!is_loopback(world.master_addr)) return "";
  return fmt::format("{}/rendezvous-{}", private_rendezvous_folder(), world.master_port);
}

Shard shard_of(int64_t count, int rank, int world) {
  const int64_t base = count / world;
  const int64_t extra = count % world;
  const int64_t r = rank;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

#if MASKPRIOR_GLOO

namespace {

milliseconds timeout_of(const World& world) {
  return milliseconds(static_cast<int64_t>(world.timeout_seconds * 1000));
}

/// A joined rendezvous: the store, and for a file rendezvous this process's part in it (declared
/// first, so that it outlives the store).
struct Joined {
  std::unique_ptr<RendezvousFile> file;
  c10::intrusive_ptr<c10d::Store> store;
};

/// Joins the rendezvous of `world` (rendezvous_file_of): a FileStore, or the TCPStore that rank 0
/// serves; InputError saying where it waited if it cannot.
Joined connect_store(const World& world) {
  Joined joined;
  const std::string file = rendezvous_file_of(world);
  if (!file.empty()) {
    joined.file =
        std::make_unique<RendezvousFile>(file, world.rank, world.size, world.timeout_seconds);
    try {
      joined.store = c10::make_intrusive<c10d::FileStore>(file, world.size);
      joined.store->setTimeout(timeout_of(world));
    } catch (const std::exception& e) {
      throw InputError(fmt::format("rank {} of {}: cannot open the rendezvous file {}: {}",
                                   world.rank, world.size, file, e.what()));
    }
    return joined;
  }
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(world.master_port);
  options.isServer = world.rank == 0;
  options.numWorkers = static_cast<std::size_t>(world.size);
  options.waitWorkers = true;
  options.timeout = timeout_of(world);
  try {
    joined.store = c10::make_intrusive<c10d::TCPStore>(world.master_addr, options);
  } catch (const std::exception& e) {
    throw InputError(fmt::format(
        "rank {} of {}: cannot {} the rendezvous at {}:{} within {} s (is every rank started, "
        "with the same MASTER_ADDR and MASTER_PORT?): {}",
        world.rank, world.size, world.rank == 0 ? "serve" : "reach", world.master_addr,
        world.master_port, world.timeout_seconds, e.what()));
  }
  return joined;
}

/// Waits until `key` is in the store: for a file rendezvous, until rank 0 sets it or dies (then
/// false); for a TCPStore, rank 0 dying ends the connection and the wait throws.
bool wait_for_rank0(const Joined& joined, const std::string& key) {
  if (!joined.file) {
    joined.store->wait({key}, std::chrono::hours(24 * 365));
    return true;
  }
  while (!joined.store->check({key})) {
    if (!joined.file->rank0_alive()) return joined.store->check({key});
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

/// The Gloo transport: on the interface GLOO_SOCKET_IFNAME names, on loopback when the master is
/// local, else on this machine's hostname.
std::shared_ptr<gloo::transport::Device> gloo_device(const World& world) {
  const std::string interface = env_text("GLOO_SOCKET_IFNAME", "");
  if (!interface.empty()) return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  if (is_loopback(world.master_addr)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

/// Every rank's tensors flattened into buckets of one dtype and at most kBucketBytes.
std::vector<std::vector<torch::Tensor>> buckets_of(const std::vector<torch::Tensor>& tensors) {
  std::vector<std::vector<torch::Tensor>> buckets;
  int64_t bytes = 0;
  for (const auto& t : tensors) {
    const int64_t size = t.numel() * static_cast<int64_t>(t.element_size());
    if (buckets.empty() || bytes + size > ProcessGroup::kBucketBytes ||
        buckets.back().front().scalar_type() != t.scalar_type()) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(t);
    bytes += size;
  }
  return buckets;
}

torch::Tensor flatten(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> flat;
  flat.reserve(tensors.size());
  for (const auto& t : tensors) flat.push_back(t.detach().reshape(-1));
  return torch::cat(flat);
}

void unflatten(const torch::Tensor& flat, const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (const auto& t : tensors) {
    const int64_t n = t.numel();
    t.copy_(flat.narrow(0, offset, n).view_as(t));
    offset += n;
  }
}

}  // namespace

struct ProcessGroup::Impl {
  World world;
  bool cuda = false;
  bool nccl = false;
  Joined joined;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#if MASKPRIOR_HAVE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl_group;
#endif
  int64_t rank0_sections = 0;

  /// Runs one collective on `buffers` (CPU via Gloo, or CUDA via NCCL) and waits for all of them.
  void run(
      std::vector<torch::Tensor>& buffers, const char* what,
      const std::function<c10::intrusive_ptr<c10d::Work>(std::vector<torch::Tensor>&)>& start_gloo,
      const std::function<c10::intrusive_ptr<c10d::Work>(std::vector<torch::Tensor>&)>& start_nccl);
  [[noreturn]] void lost(const char* what, const std::exception& e) const;
};

void ProcessGroup::Impl::lost(const char* what, const std::exception& e) const {
  throw InputError(fmt::format(
      "rank {} of {}: {} failed: another rank stopped or died, or did not answer within {} s "
      "(MASKC_DIST_TIMEOUT / --dist-timeout), so this rank stops. Cause: {}",
      world.rank, world.size, what, world.timeout_seconds, e.what()));
}

void ProcessGroup::Impl::run(
    std::vector<torch::Tensor>& buffers, const char* what,
    const std::function<c10::intrusive_ptr<c10d::Work>(std::vector<torch::Tensor>&)>& start_gloo,
    const std::function<c10::intrusive_ptr<c10d::Work>(std::vector<torch::Tensor>&)>& start_nccl) {
  try {
    std::vector<std::vector<torch::Tensor>> singles;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& b : buffers) {
      singles.push_back({nccl ? b : b.to(torch::kCPU)});
      works.push_back(nccl ? start_nccl(singles.back()) : start_gloo(singles.back()));
    }
    for (size_t i = 0; i < works.size(); ++i) {
      works[i]->wait();
      if (!buffers[i].is_same(singles[i][0])) buffers[i].copy_(singles[i][0]);
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    lost(what, e);
  }
}

ProcessGroup::ProcessGroup(const World& world, bool cuda) : impl_(std::make_unique<Impl>()) {
  check_world(world);
  impl_->world = world;
  impl_->cuda = cuda;
  impl_->joined = connect_store(world);
  auto options = c10d::ProcessGroupGloo::Options::create(timeout_of(world));
  options->threads = 1;
  try {
    options->devices.push_back(gloo_device(world));
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>("gloo", impl_->joined.store), world.rank, world.size,
        options);
#if MASKPRIOR_HAVE_NCCL
    if (cuda) {
      impl_->nccl_group = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          c10::make_intrusive<c10d::PrefixStore>("nccl", impl_->joined.store), world.rank,
          world.size, c10d::ProcessGroupNCCL::Options::create());
      impl_->nccl = true;
    }
#endif
  } catch (const std::exception& e) {
    impl_->lost("joining the group", e);
  }
}

ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const {
  return impl_->world.rank;
}

int ProcessGroup::size() const {
  return impl_->world.size;
}

int ProcessGroup::local_rank() const {
  return impl_->world.local_rank;
}

namespace {

c10d::AllreduceOptions reduce_options(c10d::ReduceOp op) {
  c10d::AllreduceOptions options;
  options.reduceOp = op;
  return options;
}

}  // namespace

double ProcessGroup::sum_gradients(const std::vector<torch::Tensor>& params, double extra) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  auto buckets = buckets_of(grads);
  std::vector<torch::Tensor> flats;
  for (const auto& bucket : buckets) flats.push_back(flatten(bucket));
  // `extra` rides in a bucket of its own dtype (double): exact for any gradient dtype.
  flats.push_back(torch::full({1}, extra, torch::TensorOptions().dtype(torch::kDouble)));
  if (impl_->nccl) flats.back() = flats.back().to(params.front().device());
  const auto sum = reduce_options(c10d::ReduceOp::SUM);
  impl_->run(
      flats, "summing gradients",
      [&](std::vector<torch::Tensor>& t) { return impl_->gloo->allreduce(t, sum); },
      [&](std::vector<torch::Tensor>& t) {
#if MASKPRIOR_HAVE_NCCL
        return impl_->nccl_group->allreduce(t, sum);
#else
        return impl_->gloo->allreduce(t, sum);
#endif
      });
  for (size_t i = 0; i < buckets.size(); ++i) unflatten(flats[i], buckets[i]);
  return flats.back().to(torch::kCPU).item<double>();
}

void ProcessGroup::broadcast(const std::vector<torch::Tensor>& tensors) {
  auto buckets = buckets_of(tensors);
  std::vector<torch::Tensor> flats;
  for (const auto& bucket : buckets) flats.push_back(flatten(bucket));
  c10d::BroadcastOptions options;
  options.rootRank = 0;
  impl_->run(
      flats, "broadcasting rank 0's parameters",
      [&](std::vector<torch::Tensor>& t) { return impl_->gloo->broadcast(t, options); },
      [&](std::vector<torch::Tensor>& t) {
#if MASKPRIOR_HAVE_NCCL
        return impl_->nccl_group->broadcast(t, options);
#else
        return impl_->gloo->broadcast(t, options);
#endif
      });
  for (size_t i = 0; i < buckets.size(); ++i) unflatten(flats[i], buckets[i]);
}

int64_t ProcessGroup::max(int64_t value) {
  std::vector<torch::Tensor> flag = {torch::full({1}, value, torch::kLong)};
  const auto op = reduce_options(c10d::ReduceOp::MAX);
  try {
    impl_->gloo->allreduce(flag, op)->wait();
  } catch (const std::exception& e) {
    impl_->lost("agreeing on whether to stop", e);
  }
  return flag[0].item<int64_t>();
}

void ProcessGroup::on_rank0(const std::function<void()>& work) {
  const std::string key = fmt::format("maskc/rank0/{}", impl_->rank0_sections++);
  if (impl_->world.rank == 0) {
    work();
    impl_->joined.store->set(key, std::vector<uint8_t>{1});
    return;
  }
  const char* what = "waiting for rank 0 (evaluating, writing)";
  bool done = false;
  try {
    done = wait_for_rank0(impl_->joined, key);
  } catch (const std::exception& e) {
    impl_->lost(what, e);
  }
  if (!done) impl_->lost(what, std::runtime_error("rank 0 has ended"));
}

// ---------------------------------------------------------------------------------------------

struct Rendezvous::Impl {
  World world;
  Joined joined;
};

Rendezvous::Rendezvous(const World& world) : impl_(std::make_unique<Impl>()) {
  check_world(world);
  impl_->world = world;
  impl_->joined = connect_store(world);
}

Rendezvous::~Rendezvous() = default;

void Rendezvous::set(const std::string& key, const std::string& value) {
  impl_->joined.store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::optional<std::string> Rendezvous::get(const std::string& key) {
  if (!impl_->joined.store->check({key})) return std::nullopt;
  const auto bytes = impl_->joined.store->get(key);
  return std::string(bytes.begin(), bytes.end());
}

void Rendezvous::wait_for_leavers(double timeout_seconds) {
  const auto until =
      std::chrono::steady_clock::now() + milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  while (impl_->joined.store->add("maskc/left", 0) < impl_->world.size - 1 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(50));
  }
}

void Rendezvous::leave() {
  impl_->joined.store->add("maskc/left", 1);
}

#else  // no Gloo in this LibTorch

namespace {
[[noreturn]] void no_gloo() {
  throw InputError(
      "this build of maskprior has no c10d Gloo (LibTorch without USE_C10D_GLOO or no gloo "
      "headers), so it cannot join a group of processes; unset RANK/WORLD_SIZE to run alone");
}
}  // namespace

struct ProcessGroup::Impl {};
ProcessGroup::ProcessGroup(const World&, bool) {
  no_gloo();
}
ProcessGroup::~ProcessGroup() = default;
int ProcessGroup::rank() const {
  return 0;
}
int ProcessGroup::size() const {
  return 1;
}
int ProcessGroup::local_rank() const {
  return 0;
}
double ProcessGroup::sum_gradients(const std::vector<torch::Tensor>&, double) {
  no_gloo();
}
void ProcessGroup::broadcast(const std::vector<torch::Tensor>&) {
  no_gloo();
}
int64_t ProcessGroup::max(int64_t) {
  no_gloo();
}
void ProcessGroup::on_rank0(const std::function<void()>&) {
  no_gloo();
}
struct Rendezvous::Impl {};
Rendezvous::Rendezvous(const World&) {
  no_gloo();
}
Rendezvous::~Rendezvous() = default;
void Rendezvous::set(const std::string&, const std::string&) {
  no_gloo();
}
std::optional<std::string> Rendezvous::get(const std::string&) {
  no_gloo();
}
void Rendezvous::wait_for_leavers(double) {
  no_gloo();
}
void Rendezvous::leave() {
  no_gloo();
}

#endif

}  // namespace maskprior::training
