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

/// Rank 0 with workers: hands out the pending runs and records their results.
Result<BatchOutcome> coordinate(const MpiSession& session, const BatchPlan& plan, ResultsDatabase& database,
                                const BatchOptions& options) {
  auto pending = pending_runs(plan, database);
  const std::size_t pending_count = pending.ok() ? pending->size() : 0;
  BatchOutcome outcome;
  outcome.total = plan.runs.size();
  outcome.already_done = outcome.total - pending_count;
  if (pending.ok() && options.on_progress) options.on_progress(outcome.already_done, outcome.total);

  std::size_t cursor = 0;  // the next pending run to hand out
  bool stopping = !pending.ok();
  Status failure = pending.status();
  std::vector<int> in_flight(static_cast<std::size_t>(session.size()), 0);
  int total_in_flight = 0;
  // Gives `worker` its next run, or tells it to stop once it has nothing left in flight.
  const auto feed = [&](int worker) {
    if (!stopping && cursor < pending_count) {
      send_index(worker, static_cast<std::int64_t>((*pending)[cursor++]));
      ++in_flight[static_cast<std::size_t>(worker)];
      ++total_in_flight;
    } else if (in_flight[static_cast<std::size_t>(worker)] == 0) {
      send_index(worker, kStop);
    }
  };
  for (int round = 0; round < kInFlightPerWorker; ++round) {
    for (int worker = 1; worker < session.size(); ++worker) {
      if (round == 0 || in_flight[static_cast<std::size_t>(worker)] > 0) feed(worker);
    }
  }

  // Results wait here for their commit, on the thread runner's terms (kCommitBatch, kCommitLinger).
  std::vector<RunRecord> records;
  auto first_waiting = std::chrono::steady_clock::now();
  while (total_in_flight > 0 || !records.empty()) {
    // Everything that has arrived. Polling with a short sleep keeps rank 0 off the CPU, which the
    // workers need when ranks outnumber cores.
    std::vector<int> senders;
    for (;;) {
      int arrived = 0;
      MPI_Status probed;
      MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &arrived, &probed);
      if (arrived == 0) break;
      const nlohmann::json message = nlohmann::json::parse(receive_text(probed), nullptr, false);
      --in_flight[static_cast<std::size_t>(probed.MPI_SOURCE)];
      --total_in_flight;
      senders.push_back(probed.MPI_SOURCE);
      const std::string rank = "rank " + std::to_string(probed.MPI_SOURCE);
      if (message.is_discarded() || !message.contains("run") || !message["run"].is_number_unsigned() ||
          message["run"].get<std::size_t>() >= plan.runs.size()) {
        failure = data_loss_error(rank + " sent a malformed result");
      } else if (message.contains("failure")) {
        failure = internal_error(rank + ": " + message["failure"].get<std::string>());
      } else if (Result<RunOutcome> run_outcome = outcome_from_json_text(message.value("outcome", std::string()));
                 !run_outcome.ok()) {
        failure = run_outcome.status().with_context(rank);
      } else {
        const auto index = message["run"].get<std::size_t>();
        if (records.empty()) first_waiting = std::chrono::steady_clock::now();
        records.push_back(make_record(plan, plan.runs[index], std::move(*run_outcome)));
      }
    }
    if (options.cancellation != nullptr && options.cancellation->cancelled()) stopping = true;
    if (!failure.ok()) stopping = true;
    const bool commit = records.size() >= kCommitBatch || total_in_flight == 0 ||
                        std::chrono::steady_clock::now() - first_waiting >= kCommitLinger;
    if (!records.empty() && failure.ok() && commit) {
      if (Status status = database.insert(records); !status.ok()) {
        failure = status;
        stopping = true;
      } else {
        outcome.executed += records.size();
        for (const auto& record : records) outcome.failed += record.outcome.error ? 1 : 0;
        if (options.on_progress) options.on_progress(outcome.already_done + outcome.executed, outcome.total);
      }
      records.clear();
    }
    if (!failure.ok()) records.clear();
    for (const int sender : senders) feed(sender);
    if (senders.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!failure.ok()) return failure;
  if (outcome.executed < pending_count) {
    return cancelled_error("the batch was cancelled after " + std::to_string(outcome.executed) + " of " +
                           std::to_string(pending_count) + " pending runs; run it again to resume");
  }
  return outcome;
}

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
  return coordinate(session, plan, *database, options);
}

}  // namespace fleetcast::batch
