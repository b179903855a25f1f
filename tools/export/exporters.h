// `fleetcast export`: a plan as the documents an autoscaling system applies.
//
//  - aws: per group, the request documents of the EC2 and Auto Scaling APIs (CreateLaunchTemplate,
//    CreateAutoScalingGroup with a MixedInstancesPolicy, BatchPutScheduledUpdateGroupAction in calls
//    of at most 50, PutScalingPolicy), for `aws ... --cli-input-json file://` or boto3;
//  - cloudformation: one template per region with the same resources and parameters for the image,
//    subnets and security groups;
//  - kubernetes: per group, a Karpenter NodePool, a Deployment per capacity type requesting
//    nvidia.com/gpu with node affinity on GPU and capacity type, and a HorizontalPodAutoscaler each.
//
// Every format is rendered only after the whole plan passed the AWS limit checks (aws_limits.h)
// and the format's own checks; a refused plan yields an error and no files. Each output folder has
// a README.txt saying what to apply, in which order, and which placeholders to replace.
//
// Thread-safety: the functions are reentrant; write_export must not race another writer of `out`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/plan.h"
#include "fleetcast/status.h"

namespace fleetcast::exporters {

enum class ExportFormat { aws, cloudformation, kubernetes };

/// "aws", "cloudformation", "kubernetes"; nullopt for anything else.
std::optional<ExportFormat> parse_export_format(std::string_view name);

/// One output file: a path relative to the output folder, and its text.
struct ExportFile {
  std::filesystem::path path;
  std::string contents;
};

/// The placeholders the documents hold, to be replaced before applying them. Listed in README.txt.
inline constexpr std::string_view kImagePlaceholder = "ami-REPLACE-WITH-GPU-AMI";
inline constexpr std::string_view kSubnetPlaceholder = "subnet-REPLACE-ME";
inline constexpr std::string_view kSecurityGroupPlaceholder = "sg-REPLACE-ME";
/// Container images are "<registry placeholder>/<workload>:latest".
inline constexpr std::string_view kRegistryPlaceholder = "replace-with-your-registry";
inline constexpr std::string_view kNodeClassPlaceholder = "replace-with-your-ec2nodeclass";

/// The first line of each format's README.txt: "<what> exported by fleetcast from the plan of
/// scenario '<name>' (<plan hash>)".
std::string readme_heading(const Plan& plan, std::string_view what);

/// Checks the plan (AWS limits, then the format's own rules) and renders every file of the format.
Result<std::vector<ExportFile>> render_export(const Plan& plan, ExportFormat format);

Result<std::vector<ExportFile>> render_aws_requests(const Plan& plan);
Result<std::vector<ExportFile>> render_cloudformation(const Plan& plan);
Result<std::vector<ExportFile>> render_kubernetes(const Plan& plan);

/// Writes the files into the folder `out`, all or nothing: they are written into a temporary folder
/// beside `out`, which is then renamed to `out`. `out` must not exist, or be an empty folder; on any
/// failure nothing is left behind.
Status write_export(const std::vector<ExportFile>& files, const std::filesystem::path& out);

/// render_export, then write_export.
Status export_plan(const Plan& plan, ExportFormat format, const std::filesystem::path& out);

}  // namespace fleetcast::exporters
