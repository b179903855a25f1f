// A mixed-integer linear program held as sparse triplets, and its solution with COIN-OR: CBC for
// the integer program (exact, within a time limit), CLP for its LP relaxation. milp.cpp is the only
// file that includes COIN-OR headers, and it turns their exceptions into Status values.
//
// Thread-safety: LinearProgram is a value type; solve_milp and solve_lp_relaxation are reentrant
// (each call owns its solver objects).
#pragma once

#include <vector>

#include "fleetcast/cancellation.h"
#include "fleetcast/status.h"

namespace fleetcast::engine::planner {

/// minimise objective . x  subject to  row_lower <= A x <= row_upper,  column_lower <= x <= column_upper,
/// x integer where `integer` says so. Infinite bounds are +-kInfinity.
class LinearProgram {
 public:
  static constexpr double kInfinity = 1e30;  // COIN-OR's own infinity

  /// Adds a column (a variable) and returns its index.
  int add_column(double lower, double upper, double objective, bool integer);
  /// Adds a row (a constraint) with no entries yet and returns its index.
  int add_row(double lower, double upper);
  /// A[row][column] += value.
  void add_entry(int row, int column, double value);

  [[nodiscard]] int columns() const { return static_cast<int>(objective_.size()); }
  [[nodiscard]] int rows() const { return static_cast<int>(row_lower_.size()); }
  [[nodiscard]] double objective(int column) const { return objective_[static_cast<std::size_t>(column)]; }
  [[nodiscard]] bool integer(int column) const { return integer_[static_cast<std::size_t>(column)] != 0; }

  /// The matrix in column-major form (starts, row indices, values), as COIN-OR loads it.
  struct ColumnMajor {
    std::vector<int> starts, indices;
    std::vector<double> values;
  };
  [[nodiscard]] ColumnMajor column_major() const;
  [[nodiscard]] const std::vector<double>& column_lower() const { return column_lower_; }
  [[nodiscard]] const std::vector<double>& column_upper() const { return column_upper_; }
  [[nodiscard]] const std::vector<double>& objectives() const { return objective_; }
  [[nodiscard]] const std::vector<double>& row_lower() const { return row_lower_; }
  [[nodiscard]] const std::vector<double>& row_upper() const { return row_upper_; }

 private:
  struct Entry {
    int row, column;
    double value;
  };
  std::vector<double> column_lower_, column_upper_, objective_;
  std::vector<char> integer_;
  std::vector<double> row_lower_, row_upper_;
  std::vector<Entry> entries_;
};

struct MilpSolution {
  std::vector<double> values;  // per column, integer columns as the solver left them (round them)
  double objective = 0;        // of `values`
  double best_bound = 0;       // the solver's lower bound when it stopped (= objective when optimal)
  bool proven_optimal = false;
};

/// Solves the integer program with CBC, stopping after `time_limit_seconds` (wall-clock, from the
/// call) with the best solution found. failed_precondition when it is infeasible or no solution
/// was found in time; invalid_argument when the limit is not positive; internal when the solver
/// fails; cancelled when `cancellation` (optional, read from the solver's thread) was cancelled,
/// which stops the search at its next node.
Result<MilpSolution> solve_milp(const LinearProgram& program, double time_limit_seconds,
                                const CancellationToken* cancellation = nullptr);

/// The optimum of the LP relaxation (every column continuous) with CLP: a lower bound of the
/// integer program's. failed_precondition when the relaxation is infeasible or CLP did not solve
/// it within `time_limit_seconds` (wall-clock); invalid_argument when the limit is not positive;
/// cancelled when `cancellation` (optional) was cancelled, which stops CLP at its next iteration.
Result<double> solve_lp_relaxation(const LinearProgram& program, double time_limit_seconds,
                                   const CancellationToken* cancellation = nullptr);

}  // namespace fleetcast::engine::planner
