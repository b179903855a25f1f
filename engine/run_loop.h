// The event loop of a simulation: pops events in (time, phase, sequence) order, advances the clock,
// hands each event to the model, and checks its own invariants and the caller's cancellation.
//
// Thread-safety: one loop per simulation and thread; the token may be cancelled from elsewhere.
#pragma once

#include <cstdint>
#include <string>

#include "engine/event_queue.h"
#include "fleetcast/cancellation.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

struct RunStatistics {
  std::uint64_t events = 0;
  Seconds now{0};
};

/// How many events run between two looks at the cancellation token (a relaxed atomic load is
/// cheap, but not free in a loop doing little else).
inline constexpr std::uint64_t kCancellationCheckInterval = 4096;

/// Runs events with time < `end`, in order, calling `handle(fired, queue)`; the handler may
/// schedule and cancel events (never before the current time) and returns a Status: an error stops
/// the run and is returned. Returns internal_error if an event would move time backwards (a bug in
/// a model), cancelled_error promptly after `token` is cancelled. Events at or after `end` stay
/// pending; `stats.now` ends at the last event's time.
template <typename Payload, typename Handler>
Status run_events(EventQueue<Payload>& queue, Seconds end, RunStatistics& stats, Handler&& handle,
                  const CancellationToken* token = nullptr) {
  while (true) {
    const auto next = queue.next_time();
    if (!next || *next >= end) break;
    auto fired = queue.pop();
    if (fired->time < stats.now) {
      return internal_error("event time went backwards: an event at t=" + std::to_string(fired->time.count()) +
                            " s fired after t=" + std::to_string(stats.now.count()) + " s");
    }
    stats.now = fired->time;
    ++stats.events;
    if (Status status = handle(*fired, queue); !status.ok()) return status;
    if (token != nullptr && stats.events % kCancellationCheckInterval == 0 && token->cancelled()) {
      return cancelled_error("cancelled at simulated time t=" + std::to_string(stats.now.count()) + " s after " +
                             std::to_string(stats.events) + " events");
    }
  }
  if (token != nullptr && token->cancelled()) return cancelled_error("cancelled");
  return {};
}

}  // namespace fleetcast::engine
