// The pending-event set of a discrete-event simulation.
//
// Events are ordered by (time, phase, sequence): time first; at the same instant by a documented
// phase order, so that for example prices change before capacity decisions read them; and within a
// phase by the order they were scheduled (FIFO), as ns-3's scheduler does. Payloads are values of
// a closed type (the engine uses a std::variant of small event structs): printable, copyable, no
// captured references that could dangle.
//
// Cancellation is lazy: cancel() marks the payload's slot dead and the heap entry is dropped when
// it reaches the top, so both schedule and cancel are O(log n) and O(1). The heap is 4-ary over
// 24-byte keys (time, phase and sequence packed, slot), which keeps the hot loop in cache; the
// payloads live in a slot array reused through a free list.
//
// Thread-safety: none; one queue belongs to one simulation on one thread.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fleetcast/time.h"

namespace fleetcast::engine {

/// Same-instant order. Documented contract: prices -> capacity -> demand -> decision -> accounting.
enum class Phase : std::uint8_t { prices = 0, capacity = 1, demand = 2, decision = 3, accounting = 4 };

/// Identifies a scheduled event for cancellation; stale ids (already fired or cancelled) are
/// recognised by their generation and ignored.
struct EventId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  friend bool operator==(EventId, EventId) = default;
};

template <typename Payload>
class EventQueue {
 public:
  struct Fired {
    Seconds time;
    Phase phase;
    std::uint64_t sequence;
    Payload payload;
  };

  /// Schedules `payload` at `time` in `phase`; returns its id for cancel().
  EventId schedule(Seconds time, Phase phase, Payload payload) {
    std::uint32_t slot;
    if (free_slots_.empty()) {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(Slot{std::move(payload), 0, true});
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slots_[slot].payload = std::move(payload);
      slots_[slot].live = true;
    }
    const std::uint64_t sequence = next_sequence_++;
    assert(sequence < (std::uint64_t{1} << kSequenceBits));
    heap_.push_back(Key{time.count(), (static_cast<std::uint64_t>(phase) << kSequenceBits) | sequence, slot});
    sift_up(heap_.size() - 1);
    ++live_count_;
    return EventId{slot, slots_[slot].generation};
  }

  /// Cancels a pending event; returns false when it already fired or was cancelled.
  bool cancel(EventId id) {
    if (id.slot >= slots_.size()) return false;
    Slot& slot = slots_[id.slot];
    if (slot.generation != id.generation || !slot.live) return false;
    slot.live = false;
    --live_count_;
    return true;
  }

  /// Time of the first live event, or nullopt when none is pending. Drops cancelled entries that
  /// have reached the top on the way.
  std::optional<Seconds> next_time() {
    drop_cancelled_top();
    if (heap_.empty()) return std::nullopt;
    return Seconds{heap_.front().time};
  }

  /// Removes and returns the first live event, or nullopt when none is pending.
  std::optional<Fired> pop() {
    drop_cancelled_top();
    if (heap_.empty()) return std::nullopt;
    const Key top = heap_.front();
    remove_top();
    Slot& slot = release(top.slot);
    --live_count_;
    return Fired{Seconds{top.time}, static_cast<Phase>(top.phase_sequence >> kSequenceBits),
                 top.phase_sequence & kSequenceMask, std::move(slot.payload)};
  }

  [[nodiscard]] std::size_t size() const { return live_count_; }
  [[nodiscard]] bool empty() const { return live_count_ == 0; }

 private:
  static constexpr int kSequenceBits = 60;
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << kSequenceBits) - 1;
  static constexpr std::size_t kArity = 4;

  struct Key {
    std::int64_t time;
    std::uint64_t phase_sequence;  // phase in the top 4 bits, then the sequence number
    std::uint32_t slot;
    bool operator<(const Key& other) const {
      return time != other.time ? time < other.time : phase_sequence < other.phase_sequence;
    }
  };
  struct Slot {
    Payload payload;
    std::uint32_t generation;
    bool live;
  };

  // Frees a slot: its id becomes stale (generation bump) and the slot can be reused.
  Slot& release(std::uint32_t index) {
    Slot& slot = slots_[index];
    slot.live = false;
    ++slot.generation;
    free_slots_.push_back(index);
    return slot;
  }

  void drop_cancelled_top() {
    while (!heap_.empty() && !slots_[heap_.front().slot].live) {
      const std::uint32_t slot = heap_.front().slot;
      remove_top();
      release(slot);
    }
  }

  void sift_up(std::size_t index) {
    const Key key = heap_[index];
    while (index > 0) {
      const std::size_t parent = (index - 1) / kArity;
      if (!(key < heap_[parent])) break;
      heap_[index] = heap_[parent];
      index = parent;
    }
    heap_[index] = key;
  }

  void remove_top() {
    const Key last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return;
    std::size_t index = 0;
    const std::size_t size = heap_.size();
    while (true) {
      const std::size_t first_child = index * kArity + 1;
      if (first_child >= size) break;
      std::size_t best = first_child;
      const std::size_t end = std::min(first_child + kArity, size);
      for (std::size_t child = first_child + 1; child < end; ++child) {
        if (heap_[child] < heap_[best]) best = child;
      }
      if (!(heap_[best] < last)) break;
      heap_[index] = heap_[best];
      index = best;
    }
    heap_[index] = last;
  }

  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_sequence_ = 0;
  std::size_t live_count_ = 0;
};

}  // namespace fleetcast::engine
