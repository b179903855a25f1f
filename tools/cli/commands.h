// The subcommands of the `fleetcast` CLI. Each lives in its own file and registers itself on the
// root CLI11 app; its callback stores the exit code in `exit_code`. Commands that write files take
// the FileSystem their writes go through (main.cpp: the real one, or under FLEETCAST_INJECT_FAULT
// one that fails a step, for the fault-injection tests); nullptr is the real one.
//
// Exit codes, the same for every command: 0 success, 1 the work failed (I/O, a run error),
// 2 invalid input or usage (a bad scenario, a bad flag).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fleetcast/file_system.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitInvalidInput = 2;

/// The exit code of a failed command: kExitInvalidInput for invalid_argument, not_found,
/// failed_precondition and out_of_range (the input or the usage was wrong, a file that is not the
/// database it should be included), else kExitFailure.
int exit_code_for(const Status& status);

void add_validate_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_pricing_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_forecast_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_plan_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_backtest_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_commitments_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_batch_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_report_command(CLI::App& app, int& exit_code, FileSystem* files);
void add_serve_command(CLI::App& app, int& exit_code);

/// Guards a command's file options (named as added: "--out", "SCENARIO"): each of `outputs` must
/// not be given an empty path (which would write nothing, silently), nor name the same file as one
/// of `inputs` or an earlier output (the write would destroy the input, or one output the other);
/// the same file is the same inode where both exist, else the same path once resolved. A refusal is
/// a CLI::ValidationError naming both options: exit code 2 before anything runs.
void guard_file_options(CLI::App* command, std::vector<std::string> inputs, std::vector<std::string> outputs);

/// An output option ("--out") and the path it was given ("" when not given).
struct OutputFile {
  std::string option;
  std::string path;
};

/// The check of guard_file_options against the files a loaded input reads, which the command line
/// does not name (a scenario's demand traces and price database, a sweep's base scenario, a
/// --forecast file): prints "--out: 'd.csv' names the same file as the demand trace of workload
/// 'w' ('/abs/d.csv'), which writing it would destroy; choose another file" and returns
/// kExitInvalidInput for the first output that names one of `inputs`, else kExitOk. Called after
/// the inputs load and before anything is written.
int guard_outputs_against(std::span<const OutputFile> outputs, std::span<const ScenarioFile> inputs);

/// Writes an output file a command's option names: nothing when `path` is empty; "/dev/stdout"
/// (or /dev/fd/1) is written to std::cout, "/dev/stderr" (or /dev/fd/2) to std::cerr (the
/// descriptor the shell opened, at its offset, so that what the command prints next follows it,
/// even into a file, which a replacing write would have unlinked); any other path through
/// write_file_atomically (and `files`). Prints why it could not and returns kExitFailure, else kExitOk.
int write_output_file(const std::string& path, std::string_view contents, FileSystem* files);

/// The `--html FILE` option of plan, run and backtest: writes `render()` to `path` atomically when
/// `path` is not empty, through `files`; prints why not and returns kExitFailure when it cannot,
/// else kExitOk.
int write_html_report(const std::string& path, const std::function<std::string()>& render, FileSystem* files);
/// "fleetcast <version> <command>": the foot line of a report.
std::string report_generated_by(const std::string& command);

}  // namespace fleetcast::cli
