#include "tools/batch/mpi_batch.h"

#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace fleetcast::batch {

namespace {

constexpr int kWorkTag = 1;    // rank 0 -> worker: one int64 run index, or kStop
constexpr int kResultTag = 2;  // worker -> rank 0: JSON {"run": index, "outcome": "<outcome JSON text>"} or {"run", "failure"}
constexpr std::int64_t kStop = -1;
constexpr int kInFlightPerWorker = 4;

void send_index(int worker, std::int64_t index) {
  MPI_Send(&index, 1, MPI_INT64_T, worker, kWorkTag, MPI_COMM_WORLD);
}

/// Receives the result message that `status` announced.
std::string receive_text(const MPI_Status& probed) {
  int length = 0;
  MPI_Get_count(&probed, MPI_CHAR, &length);
  std::string text(static_cast<std::size_t>(length), '\0');
  MPI_Recv(text.data(), length, MPI_CHAR, probed.MPI_SOURCE, kResultTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

/// A worker: executes the runs rank 0 sends until told to stop.
BatchOutcome work(const BatchPlan& plan, bool time_series) {
  BatchOutcome outcome;
  outcome.total = plan.runs.size();
  for (;;) {
    std::int64_t index = kStop;
    MPI_Recv(&index, 1, MPI_INT64_T, 0, kWorkTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index == kStop) break;
    Result<RunRecord> record = execute_planned_run(plan, static_cast<std::size_t>(index), time_series, nullptr);
    nlohmann::json message = {{"run", index}};
    if (record.ok()) {
      message["outcome"] = outcome_json_text(record->outcome);
      ++outcome.executed;
      if (record->outcome.error) ++outcome.failed;
    } else {
      message["failure"] = record.status().message();
    }
    const std::string text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kResultTag, MPI_COMM_WORLD);
  }
  return outcome;
}

/// Rank 0 with workers: hands out the pending runs, kInFlightPerWorker at a time per worker, and
/// records their results in commits on the thread runner's terms (kCommitBatch, kCommitLinger).
/// Not thread-safe: rank 0's one thread drives it.
class Coordinator {
 public:
  Coordinator(const MpiSession& session, const BatchPlan& plan, ResultsDatabase& database, const BatchOptions& options)
      : session_(session), plan_(plan), database_(database), options_(options), pending_(pending_runs(plan, database)),
        pending_count_(pending_.ok() ? pending_->size() : 0), failure_(pending_.status()), stopping_(!pending_.ok()),
        in_flight_(static_cast<std::size_t>(session.size()), 0) {
    outcome_.total = plan.runs.size();
    outcome_.already_done = outcome_.total - pending_count_;
  }

  Result<BatchOutcome> run() {
    if (pending_.ok() && options_.on_progress) options_.on_progress(outcome_.already_done, outcome_.total);
    for (int round = 0; round < kInFlightPerWorker; ++round) {
      for (int worker = 1; worker < session_.size(); ++worker) {
        if (round == 0 || in_flight_[static_cast<std::size_t>(worker)] > 0) feed(worker);
      }
    }
    while (total_in_flight_ > 0 || !records_.empty()) {
      const std::vector<int> senders = receive_arrived();
      if (options_.cancellation != nullptr && options_.cancellation->cancelled()) stopping_ = true;
      if (!failure_.ok()) stopping_ = true;
      commit_when_due();
      for (const int sender : senders) feed(sender);
      // Polling with a short sleep keeps rank 0 off the CPU, which the workers need when ranks
      // outnumber cores.
      if (senders.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!failure_.ok()) return failure_;
    if (outcome_.executed < pending_count_) {
      return cancelled_error("the batch was cancelled after " + std::to_string(outcome_.executed) + " of " +
                             std::to_string(pending_count_) + " pending runs; run it again to resume");
    }
    return outcome_;
  }

 private:
  /// Gives `worker` its next run, or tells it to stop once it has nothing left in flight.
  void feed(int worker) {
    int& running = in_flight_[static_cast<std::size_t>(worker)];
    if (!stopping_ && cursor_ < pending_count_) {
      send_index(worker, static_cast<std::int64_t>((*pending_)[cursor_++]));
      ++running;
      ++total_in_flight_;
    } else if (running == 0) {
      send_index(worker, kStop);
    }
  }

  /// Takes every result that has arrived; returns the ranks that sent them.
  std::vector<int> receive_arrived() {
    std::vector<int> senders;
    for (;;) {
      int arrived = 0;
      MPI_Status probed;
      MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &arrived, &probed);
      if (arrived == 0) return senders;
      const nlohmann::json message = nlohmann::json::parse(receive_text(probed), nullptr, false);
      --in_flight_[static_cast<std::size_t>(probed.MPI_SOURCE)];
      --total_in_flight_;
      senders.push_back(probed.MPI_SOURCE);
      take_result(message, "rank " + std::to_string(probed.MPI_SOURCE));
    }
  }

  /// Queues a worker's result for the next commit, or records why it cannot be.
  void take_result(const nlohmann::json& message, const std::string& rank) {
    if (message.is_discarded() || !message.contains("run") || !message["run"].is_number_unsigned() ||
        message["run"].get<std::size_t>() >= plan_.runs.size()) {
      failure_ = data_loss_error(rank + " sent a malformed result");
    } else if (message.contains("failure")) {
      failure_ = internal_error(rank + ": " + message["failure"].get<std::string>());
    } else if (Result<RunOutcome> run_outcome = outcome_from_json_text(message.value("outcome", std::string()));
               !run_outcome.ok()) {
      failure_ = run_outcome.status().with_context(rank);
    } else {
      const auto index = message["run"].get<std::size_t>();
      if (records_.empty()) first_waiting_ = std::chrono::steady_clock::now();
      records_.push_back(make_record(plan_, plan_.runs[index], std::move(*run_outcome)));
    }
  }

  /// Commits the queued results when a batch is full, nothing is in flight, or the oldest has
  /// waited kCommitLinger; after a failure they are dropped.
  void commit_when_due() {
    const bool due = records_.size() >= kCommitBatch || total_in_flight_ == 0 ||
                     std::chrono::steady_clock::now() - first_waiting_ >= kCommitLinger;
    if (!records_.empty() && failure_.ok() && due) {
      if (Status status = database_.insert(records_); !status.ok()) {
        failure_ = status;
        stopping_ = true;
      } else {
        outcome_.executed += records_.size();
        for (const auto& record : records_) outcome_.failed += record.outcome.error ? 1 : 0;
        if (options_.on_progress) options_.on_progress(outcome_.already_done + outcome_.executed, outcome_.total);
      }
      records_.clear();
    }
    if (!failure_.ok()) records_.clear();
  }

  const MpiSession& session_;
  const BatchPlan& plan_;
  ResultsDatabase& database_;
  const BatchOptions& options_;
  Result<std::vector<std::size_t>> pending_;
  std::size_t pending_count_;
  Status failure_;
  bool stopping_;
  std::vector<int> in_flight_;  // per rank
  int total_in_flight_ = 0;
  std::size_t cursor_ = 0;  // the next pending run to hand out
  std::vector<RunRecord> records_;  // results waiting for their commit
  std::chrono::steady_clock::time_point first_waiting_ = std::chrono::steady_clock::now();
  BatchOutcome outcome_;
};

}  // namespace

Result<std::unique_ptr<MpiSession>> MpiSession::start() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return unavailable_error("MPI could not be initialised (is this process started by mpirun?)");
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiSession>(new MpiSession(rank, size));
}

MpiSession::~MpiSession() { MPI_Finalize(); }

bool MpiSession::all(bool mine) const {
  int value = mine ? 1 : 0;
  int every = 0;
  MPI_Allreduce(&value, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return every != 0;
}

bool MpiSession::same_everywhere(std::uint64_t value) const {
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  MPI_Allreduce(&value, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

Result<BatchOutcome> run_batch_mpi(const MpiSession& session, const BatchPlan& plan, ResultsDatabase* database,
                                   const BatchOptions& options) {
  if (session.rank() != 0) return work(plan, options.time_series);
  if (session.size() == 1) return run_batch(plan, *database, options);
  return Coordinator(session, plan, *database, options).run();
}

}  // namespace fleetcast::batch
