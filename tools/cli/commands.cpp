#include "tools/cli/commands.h"

#include <filesystem>
#include <iostream>
#include <system_error>

namespace fleetcast::cli {

namespace {

namespace fs = std::filesystem;

// Whether two paths name one file: the same inode where both exist (a link, "./x", "../dir/x"),
// else the same path once ".", ".." and the links above it are resolved (an output not yet there).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (fs::equivalent(a, b, error)) return true;
  std::error_code error_a, error_b;
  const fs::path resolved_a = fs::weakly_canonical(fs::absolute(a), error_a);
  const fs::path resolved_b = fs::weakly_canonical(fs::absolute(b), error_b);
  return !error_a && !error_b && resolved_a == resolved_b;
}

}  // namespace

int write_output_file(const std::string& path, std::string_view contents, FileSystem* files) {
  if (path.empty()) return kExitOk;
  for (std::ostream* stream : {&std::cout, &std::cerr}) {
    const bool is_stdout = stream == &std::cout;
    if (path != (is_stdout ? "/dev/stdout" : "/dev/stderr") && path != (is_stdout ? "/dev/fd/1" : "/dev/fd/2")) continue;
    *stream << contents << std::flush;
    return *stream ? kExitOk : kExitFailure;
  }
  if (Status status = write_file_atomically(path, contents, files); !status.ok()) {
    std::cerr << status.message() << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

void guard_file_options(CLI::App* command, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  for (const std::string& output : outputs) {
    command->get_option(output)->check(
        [](const std::string& path) { return path.empty() ? std::string("expected a file path, found an empty one") : std::string(); },
        "FILE");
  }
  command->parse_complete_callback([command, inputs = std::move(inputs), outputs = std::move(outputs)] {
    std::vector<std::pair<std::string, std::string>> seen;  // (option, path) of the inputs, then the outputs so far
    for (const std::string& input : inputs) {
      for (const std::string& path : command->get_option(input)->results()) seen.emplace_back(input, path);
    }
    for (const std::string& output : outputs) {
      for (const std::string& path : command->get_option(output)->results()) {
        for (const auto& [option, earlier] : seen) {
          if (!same_file(path, earlier)) continue;
          throw CLI::ValidationError(output, "'" + path + "' names the same file as " + option + " ('" + earlier +
                                                 "'), which writing it would destroy; choose another file");
        }
        seen.emplace_back(output, path);
      }
    }
  });
}

int guard_outputs_against(std::span<const OutputFile> outputs, std::span<const ScenarioFile> inputs) {
  for (const OutputFile& output : outputs) {
    if (output.path.empty()) continue;
    for (const ScenarioFile& input : inputs) {
      if (!same_file(output.path, input.path.string())) continue;
      std::cerr << output.option << ": '" << output.path << "' names the same file as " << input.what << " ('"
                << input.path.string() << "'), which writing it would destroy; choose another file\n";
      return kExitInvalidInput;
    }
  }
  return kExitOk;
}

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::invalid_argument:
    case StatusCode::not_found:
    case StatusCode::failed_precondition:
    case StatusCode::out_of_range:
      return kExitInvalidInput;
    default:
      return kExitFailure;
  }
}

}  // namespace fleetcast::cli
