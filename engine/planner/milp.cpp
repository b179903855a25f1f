#include "engine/planner/milp.h"

#include <algorithm>
#include <exception>
#include <iterator>
#include <string>

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/ClpEventHandler.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include "core/text.h"

namespace fleetcast::engine::planner {

int LinearProgram::add_column(double lower, double upper, double objective, bool integer) {
  column_lower_.push_back(lower);
  column_upper_.push_back(upper);
  objective_.push_back(objective);
  integer_.push_back(integer ? 1 : 0);
  return columns() - 1;
}

int LinearProgram::add_row(double lower, double upper) {
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return rows() - 1;
}

void LinearProgram::add_entry(int row, int column, double value) { entries_.push_back(Entry{row, column, value}); }

LinearProgram::ColumnMajor LinearProgram::column_major() const {
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return a.column != b.column ? a.column < b.column : a.row < b.row;
  });
  ColumnMajor matrix;
  matrix.starts.assign(static_cast<std::size_t>(columns()) + 1, 0);
  const Entry* previous = nullptr;
  for (const Entry& entry : sorted) {
    // Repeated (row, column) pairs are summed: COIN-OR expects each at most once.
    if (previous != nullptr && previous->column == entry.column && previous->row == entry.row) {
      matrix.values.back() += entry.value;
    } else {
      matrix.indices.push_back(entry.row);
      matrix.values.push_back(entry.value);
      ++matrix.starts[static_cast<std::size_t>(entry.column) + 1];  // a count per column, summed below
    }
    previous = &entry;
  }
  for (std::size_t c = 1; c < matrix.starts.size(); ++c) matrix.starts[c] += matrix.starts[c - 1];
  return matrix;
}

namespace {

// "2 s", "0.5 s": a time limit as the caller wrote it, not std::to_string's "2.000000".
std::string seconds_text(double seconds) { return text::format_general(seconds) + " s"; }

// Stops CBC's search at its next event (a node, a heuristic pass, a solution) once the token is
// cancelled. CBC clones it into the model it searches with; each clone points at the one token.
class CbcStopOnCancel final : public CbcEventHandler {
 public:
  explicit CbcStopOnCancel(const CancellationToken& token) : token_(&token) {}
  CbcAction event(CbcEvent) override { return token_->cancelled() ? stop : noAction; }
  CbcAction event(CbcEvent which, void*) override { return event(which); }
  [[nodiscard]] CbcEventHandler* clone() const override { return new CbcStopOnCancel(*this); }

 private:
  const CancellationToken* token_;
};

// Stops CLP at its next iteration once the token is cancelled (0: "stopped by event").
class ClpStopOnCancel final : public ClpEventHandler {
 public:
  explicit ClpStopOnCancel(const CancellationToken& token) : token_(&token) {}
  int event(Event) override { return token_->cancelled() ? 0 : -1; }
  [[nodiscard]] ClpEventHandler* clone() const override { return new ClpStopOnCancel(*this); }

 private:
  const CancellationToken* token_;
};

// CoinBigIndex is int in Debian's build; the static_assert keeps the casts below honest.
static_assert(sizeof(CoinBigIndex) == sizeof(int), "COIN-OR built with 64-bit matrix indices");

Result<MilpSolution> run_cbc(const LinearProgram& program, double time_limit_seconds, const CancellationToken* cancellation) {
  const LinearProgram::ColumnMajor matrix = program.column_major();
  // The C++ model, not CBC's C interface: only it takes an event handler, which cancellation needs.
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(program.columns(), program.rows(), matrix.starts.data(), matrix.indices.data(), matrix.values.data(),
                     program.column_lower().data(), program.column_upper().data(), program.objectives().data(),
                     program.row_lower().data(), program.row_upper().data());
  for (int c = 0; c < program.columns(); ++c) {
    if (program.integer(c)) solver.setInteger(c);
  }
  CbcModel model(solver);
  CbcSolverUsefulData settings;
  CbcMain0(model, settings);
  if (cancellation != nullptr) {
    const CbcStopOnCancel stop(*cancellation);
    model.passInEventHandler(&stop);  // copies it
  }
  // Silent (the library never prints), one thread (the machines are shared), exact: no relative
  // gap allowed, and an absolute one far below a micro-USD. The limit is wall-clock seconds from
  // here, as BacktestOptions promises and as a served request's deadline counts them. CBC counts
  // CPU seconds by default: beside a build, a 30 s limit took 68 s (with the LP relaxation before
  // it), 39 s in elapsed time.
  const std::string limit = std::to_string(time_limit_seconds);
  const char* arguments[] = {"fleetcast", "-log", "0", "-slog", "0", "-threads", "0", "-ratioGap", "0",
                             "-allowableGap", "1e-9", "-timeMode", "elapsed", "-sec", limit.c_str(), "-solve", "-quit"};
  CbcMain1(static_cast<int>(std::size(arguments)), arguments, model, [](CbcModel*, int) { return 0; }, settings);
  if (model.status() == 5) return cancelled_error("the MILP search was cancelled");  // 5: stopped by the event handler
  if (model.isProvenInfeasible()) return failed_precondition_error("the integer program is infeasible");
  if (model.isAbandoned()) return internal_error("CBC abandoned the integer program (numerical difficulties)");
  const double* solution = model.bestSolution();
  if (solution == nullptr) {
    return failed_precondition_error("CBC found no whole-instance solution within " + seconds_text(time_limit_seconds));
  }
  MilpSolution result;
  result.values.assign(solution, solution + program.columns());
  result.objective = model.getObjValue();
  result.proven_optimal = model.isProvenOptimal();
  result.best_bound = result.proven_optimal ? result.objective : model.getBestPossibleObjValue();
  return result;
}

Result<double> run_clp(const LinearProgram& program, double time_limit_seconds, const CancellationToken* cancellation) {
  const LinearProgram::ColumnMajor matrix = program.column_major();
  // The C++ model, not Clp's C interface: only it takes a wall-clock limit (the C interface's
  // Clp_setMaximumSeconds counts CPU seconds).
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(program.columns(), program.rows(), matrix.starts.data(), matrix.indices.data(), matrix.values.data(),
                    program.column_lower().data(), program.column_upper().data(), program.objectives().data(),
                    program.row_lower().data(), program.row_upper().data());
  model.setMaximumWallSeconds(time_limit_seconds);
  if (cancellation != nullptr) {
    const ClpStopOnCancel stop(*cancellation);
    model.passInEventHandler(&stop);  // copies it
  }
  model.initialSolve();
  if (model.status() == 5) return cancelled_error("the LP relaxation was cancelled");  // 5: stopped by the event handler
  if (model.isProvenOptimal()) return model.objectiveValue();
  if (model.status() == 3) {  // "stopped on iterations or time"
    return failed_precondition_error("CLP did not solve the LP relaxation within " + seconds_text(time_limit_seconds));
  }
  // 1: no point meets every row and bound, even in fractions; 2: the objective falls without bound.
  return failed_precondition_error("the LP relaxation has no optimum (CLP status " + std::to_string(model.status()) +
                                   (model.status() == 1 ? ": infeasible)" : ")"));
}

}  // namespace

Result<MilpSolution> solve_milp(const LinearProgram& program, double time_limit_seconds,
                                const CancellationToken* cancellation) {
  if (!(time_limit_seconds > 0)) {
    return invalid_argument_error("MILP time limit: expected a positive number of seconds, found " + seconds_text(time_limit_seconds));
  }
  // Nothing to decide (no demand at all): CBC leaves a model without columns unsolved.
  if (program.columns() == 0) return MilpSolution{{}, 0, 0, true};
  try {
    return run_cbc(program, time_limit_seconds, cancellation);
  } catch (const std::exception& error) {
    return internal_error(std::string("CBC failed: ") + error.what());
  } catch (...) {  // COIN-OR throws CoinError, which is no std::exception
    return internal_error("CBC failed with a COIN-OR error");
  }
}

Result<double> solve_lp_relaxation(const LinearProgram& program, double time_limit_seconds,
                                   const CancellationToken* cancellation) {
  if (!(time_limit_seconds > 0)) {
    return invalid_argument_error("LP time limit: expected a positive number of seconds, found " + seconds_text(time_limit_seconds));
  }
  try {
    return run_clp(program, time_limit_seconds, cancellation);
  } catch (const std::exception& error) {
    return internal_error(std::string("CLP failed: ") + error.what());
  } catch (...) {
    return internal_error("CLP failed with a COIN-OR error");
  }
}

}  // namespace fleetcast::engine::planner
