#include "engine/planner/milp.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <string>

#include <coin/Cbc_C_Interface.h>
#include <coin/ClpSimplex.hpp>

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

struct CbcDeleter {
  void operator()(Cbc_Model* model) const { Cbc_deleteModel(model); }
};

// CoinBigIndex is int in Debian's build; the static_assert keeps the casts below honest.
static_assert(sizeof(CoinBigIndex) == sizeof(int), "COIN-OR built with 64-bit matrix indices");

// The best whole solution CBC found, or nullptr. When the initial LP solve settles the program
// (its presolve removes every row and column: no demand at all), CBC reports it optimal without
// branching and keeps no "best" solution; the LP's solution is taken then if it is whole.
const double* whole_solution(const LinearProgram& program, Cbc_Model* model) {
  if (const double* best = Cbc_bestSolution(model); best != nullptr) return best;
  const double* lp = Cbc_isProvenOptimal(model) != 0 ? Cbc_getColSolution(model) : nullptr;
  if (lp == nullptr) return nullptr;
  for (int c = 0; c < program.columns(); ++c) {
    if (program.integer(c) && std::abs(lp[c] - std::round(lp[c])) > 1e-9) return nullptr;
  }
  return lp;
}

Result<MilpSolution> run_cbc(const LinearProgram& program, double time_limit_seconds) {
  const LinearProgram::ColumnMajor matrix = program.column_major();
  std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
  Cbc_loadProblem(model.get(), program.columns(), program.rows(), matrix.starts.data(), matrix.indices.data(),
                  matrix.values.data(), program.column_lower().data(), program.column_upper().data(),
                  program.objectives().data(), program.row_lower().data(), program.row_upper().data());
  for (int c = 0; c < program.columns(); ++c) {
    if (program.integer(c)) Cbc_setInteger(model.get(), c);
  }
  // Silent (the library never prints), one thread (the machines are shared), exact: no relative
  // gap allowed, and an absolute one far below a micro-USD.
  Cbc_setLogLevel(model.get(), 0);
  Cbc_setParameter(model.get(), "log", "0");
  Cbc_setParameter(model.get(), "slog", "0");
  Cbc_setParameter(model.get(), "threads", "0");
  Cbc_setParameter(model.get(), "ratioGap", "0");
  Cbc_setParameter(model.get(), "allowableGap", "1e-9");
  // The limit is wall-clock seconds from here, as BacktestOptions promises and as a served
  // request's deadline counts them. CBC counts CPU seconds by default: beside a build, a 30 s
  // limit took 68 s (with the LP relaxation before it), 39 s in elapsed time.
  Cbc_setParameter(model.get(), "timeMode", "elapsed");
  Cbc_setParameter(model.get(), "sec", std::to_string(time_limit_seconds).c_str());
  Cbc_solve(model.get());
  if (Cbc_isProvenInfeasible(model.get()) != 0) return failed_precondition_error("the integer program is infeasible");
  if (Cbc_isAbandoned(model.get()) != 0) return internal_error("CBC abandoned the integer program (numerical difficulties)");
  const double* solution = whole_solution(program, model.get());
  if (solution == nullptr) {
    return failed_precondition_error("CBC found no whole-instance solution within " + seconds_text(time_limit_seconds));
  }
  MilpSolution result;
  result.values.assign(solution, solution + program.columns());
  result.objective = Cbc_getObjValue(model.get());
  result.proven_optimal = Cbc_isProvenOptimal(model.get()) != 0;
  result.best_bound = result.proven_optimal ? result.objective : Cbc_getBestPossibleObjValue(model.get());
  return result;
}

Result<double> run_clp(const LinearProgram& program, double time_limit_seconds) {
  const LinearProgram::ColumnMajor matrix = program.column_major();
  // The C++ model, not Clp's C interface: only it takes a wall-clock limit (the C interface's
  // Clp_setMaximumSeconds counts CPU seconds).
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(program.columns(), program.rows(), matrix.starts.data(), matrix.indices.data(), matrix.values.data(),
                    program.column_lower().data(), program.column_upper().data(), program.objectives().data(),
                    program.row_lower().data(), program.row_upper().data());
  model.setMaximumWallSeconds(time_limit_seconds);
  model.initialSolve();
  if (model.isProvenOptimal()) return model.objectiveValue();
  if (model.status() == 3) {  // "stopped on iterations or time"
    return failed_precondition_error("CLP did not solve the LP relaxation within " + seconds_text(time_limit_seconds));
  }
  // 1: no point meets every row and bound, even in fractions; 2: the objective falls without bound.
  return failed_precondition_error("the LP relaxation has no optimum (CLP status " + std::to_string(model.status()) +
                                   (model.status() == 1 ? ": infeasible)" : ")"));
}

}  // namespace

Result<MilpSolution> solve_milp(const LinearProgram& program, double time_limit_seconds) {
  if (!(time_limit_seconds > 0)) {
    return invalid_argument_error("MILP time limit: expected a positive number of seconds, found " + seconds_text(time_limit_seconds));
  }
  try {
    return run_cbc(program, time_limit_seconds);
  } catch (const std::exception& error) {
    return internal_error(std::string("CBC failed: ") + error.what());
  } catch (...) {  // COIN-OR throws CoinError, which is no std::exception
    return internal_error("CBC failed with a COIN-OR error");
  }
}

Result<double> solve_lp_relaxation(const LinearProgram& program, double time_limit_seconds) {
  if (!(time_limit_seconds > 0)) {
    return invalid_argument_error("LP time limit: expected a positive number of seconds, found " + seconds_text(time_limit_seconds));
  }
  try {
    return run_clp(program, time_limit_seconds);
  } catch (const std::exception& error) {
    return internal_error(std::string("CLP failed: ") + error.what());
  } catch (...) {
    return internal_error("CLP failed with a COIN-OR error");
  }
}

}  // namespace fleetcast::engine::planner
