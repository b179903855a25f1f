// How long a requested instance takes to be running: a log-normal delay per instance type.
//
// Medians, from request to the instance running (the provider's state, not the workload's
// readiness), in line with what EC2/GCE/Azure users measure for GPU instances: larger machines take
// longer because of placement in capacity blocks, larger AMIs and more devices to initialise.
//   AWS by family: g4dn, g4ad, g5, g5g, g6, g6f, gr6: 75 s;  g6e: 90 s;  p2, p3: 120 s;
//                  p3dn: 180 s;  p4d, p4de: 270 s;  p5, p5e, p5en, p6-b200: 300 s.
//   Other providers, and AWS families not listed, by whole GPUs per instance:
//                  at most 1 (or a fraction of one): 90 s;  2-4: 150 s;  5 or more: 270 s.
// The spread is log-normal with sigma 0.35 (so about 90% of launches fall within 0.56x-1.78x the
// median). A spot launch adds kSpotRequestDelay for the spot request's fulfilment.
//
// Thread-safety: pure functions; the RandomStream is the caller's and is used by one thread.
#pragma once

#include "core/random.h"
#include "fleetcast/pricing.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

/// The log-normal shape of launch latencies (standard deviation of the log).
inline constexpr double kLaunchLatencySigma = 0.35;

/// Added to a spot launch: the spot request is evaluated and fulfilled before the launch starts.
inline constexpr Seconds kSpotRequestDelay{10};

/// From running to serving (container image pull, model weights loaded into GPU memory), for
/// callers that model readiness; not part of sample_launch_latency.
inline constexpr Seconds kDefaultBootToReady{180};

/// The median request-to-running time of an on-demand or reserved launch (see the table above).
Seconds median_launch_latency(const InstanceType& type);

/// The quantile of the launch latency a plan's lead time covers (see launch_lead).
inline constexpr double kLaunchLeadQuantile = 0.99;

/// How long before an interval a planned rise is launched so that it is running by the interval's
/// start: the kLaunchLeadQuantile quantile of sample_launch_latency()'s distribution around
/// `median` (median * exp(sigma * z), plus kSpotRequestDelay for spot), rounded up to whole
/// minutes because AWS scheduled actions fire on whole minutes. 75 s on-demand: 3 min.
Seconds launch_lead(Seconds median, PurchaseOption option);

/// One launch's request-to-running time: median * exp(sigma * N(0,1)) rounded to whole seconds,
/// at least 1 s, plus kSpotRequestDelay for spot. Draws one normal from `launch_delays`.
Seconds sample_launch_latency(const InstanceType& type, PurchaseOption option, RandomStream& launch_delays);

/// The same draw around a median the caller has already looked up with median_launch_latency()
/// (the simulator does so once per pool: the lookup parses the instance family).
Seconds sample_launch_latency(Seconds median, PurchaseOption option, RandomStream& launch_delays);

}  // namespace fleetcast::engine
