// The pending-event set of a discrete-event simulation.
//
// Events are ordered by (time, phase, sequence): time first; at the same instant by a documented
// phase order, so that for example prices change before capacity decisions read them; and within a
// phase by the order they were scheduled (FIFO), as ns-3's scheduler does. Payloads are values of
// a closed type (the engine uses a std::variant of small event structs): printable, copyable, no
// captured references that could dangle.
//
// Time is integer and never goes backwards (the run loop schedules nothing before the current
// time), which a monotone integer priority queue exploits: a radix heap (Ahuja, Mehlhorn, Orlin and
// Tarjan 1990) keeps the keys in 65 buckets by the highest bit in which their time differs from
// the last time popped, so a schedule is one push_back and a pop moves each key O(1) times on
// average down the buckets, with no comparisons between unrelated keys. The keys at the current
// time sit in one FIFO per phase, which gives the phase order and, since sequence numbers only
// grow, the FIFO order within a phase. An event scheduled before the current time (a model bug)
// pops next, so that the run loop reports it.
//
// Cancellation is lazy: cancel() marks the payload's slot dead and its key is dropped when it is
// next moved or reaches the front, so schedule and cancel are O(1). Keys are 24 bytes (time,
// phase and sequence packed, slot); the payloads live in a slot array reused through a free list.
//
// Thread-safety: none; one queue belongs to one simulation on one thread.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
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
    push(Key{ordered(time), (static_cast<std::uint64_t>(phase) << kSequenceBits) | sequence, slot});
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

  /// Time of the first live event, or nullopt when none is pending.
  std::optional<Seconds> next_time() {
    const Key* front = live_front();
    if (front == nullptr) return std::nullopt;
    return time_of(front->time);
  }

  /// Removes and returns the first live event, or nullopt when none is pending.
  std::optional<Fired> pop() {
    const Key* front = live_front();
    if (front == nullptr) return std::nullopt;
    const Key key = *front;
    ++current_heads_[phase_of(key)];
    Slot& slot = release(key.slot);
    --live_count_;
    return Fired{time_of(key.time), static_cast<Phase>(phase_of(key)), key.phase_sequence & kSequenceMask,
                 std::move(slot.payload)};
  }

  [[nodiscard]] std::size_t size() const { return live_count_; }
  [[nodiscard]] bool empty() const { return live_count_ == 0; }

 private:
  static constexpr int kSequenceBits = 60;
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << kSequenceBits) - 1;
  static constexpr std::size_t kPhases = 5;
  static constexpr std::size_t kBuckets = 65;  // bucket b > 0: the highest differing bit is b - 1

  struct Key {
    std::uint64_t time;            // ordered(): the int64 time with its sign bit flipped
    std::uint64_t phase_sequence;  // phase in the top 4 bits, then the sequence number
    std::uint32_t slot;
  };
  struct Slot {
    Payload payload;
    std::uint32_t generation;
    bool live;
  };

  // Signed seconds to unsigned keys of the same order.
  static std::uint64_t ordered(Seconds time) {
    return static_cast<std::uint64_t>(time.count()) ^ (std::uint64_t{1} << 63);
  }
  static Seconds time_of(std::uint64_t key) { return Seconds{static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63))}; }
  static std::size_t phase_of(const Key& key) { return static_cast<std::size_t>(key.phase_sequence >> kSequenceBits); }

  std::size_t bucket_of(std::uint64_t time) const {
    return time <= last_ ? 0 : static_cast<std::size_t>(64 - std::countl_zero(time ^ last_));
  }

  void push(const Key& key) {
    if (key.time <= last_) {
      current_[phase_of(key)].push_back(key);
      first_phase_ = std::min(first_phase_, phase_of(key));
    } else {
      const std::size_t b = bucket_of(key.time);
      buckets_[b].push_back(key);
      filled_ |= std::uint64_t{1} << (b - 1);
    }
  }

  // Frees a slot: its id becomes stale (generation bump) and the slot can be reused.
  Slot& release(std::uint32_t index) {
    Slot& slot = slots_[index];
    slot.live = false;
    ++slot.generation;
    free_slots_.push_back(index);
    return slot;
  }

  // The first live key at the current time, moving the next time's keys there when it has none;
  // nullptr when nothing live is pending. Drops the cancelled keys it passes.
  const Key* live_front() {
    while (true) {
      for (; first_phase_ < kPhases; ++first_phase_) {
        std::vector<Key>& keys = current_[first_phase_];
        std::size_t& head = current_heads_[first_phase_];
        while (head < keys.size() && !slots_[keys[head].slot].live) release(keys[head++].slot);
        if (head < keys.size()) return &keys[head];
        keys.clear();
        head = 0;
      }
      if (!advance()) return nullptr;
    }
  }

  // Makes the smallest time in the buckets the current time: its keys move to the phase FIFOs in
  // sequence order, the others of its bucket to lower buckets. False when the buckets are empty.
  bool advance() {
    if (filled_ == 0) return false;
    const auto b = static_cast<std::size_t>(std::countr_zero(filled_)) + 1;
    filled_ &= filled_ - 1;  // bucket b empties; the keys it holds move to lower buckets
    std::vector<Key>& bucket = buckets_[b];
    std::uint64_t smallest = bucket.front().time;
    for (const Key& key : bucket) smallest = std::min(smallest, key.time);
    last_ = smallest;
    ties_.clear();
    for (const Key& key : bucket) {
      if (!slots_[key.slot].live) {
        release(key.slot);
      } else if (key.time == smallest) {
        ties_.push_back(key);
      } else {
        push(key);
      }
    }
    bucket.clear();
    if (ties_.size() > 1) {
      std::sort(ties_.begin(), ties_.end(), [](const Key& x, const Key& y) { return x.phase_sequence < y.phase_sequence; });
    }
    for (const Key& key : ties_) current_[phase_of(key)].push_back(key);
    first_phase_ = 0;
    return true;
  }

  std::array<std::vector<Key>, kBuckets> buckets_;      // bucket 0 unused: the current time's keys are below
  std::uint64_t filled_ = 0;                             // bit b - 1 set: bucket b may hold keys
  std::array<std::vector<Key>, kPhases> current_;       // keys at the current time, per phase, FIFO
  std::array<std::size_t, kPhases> current_heads_{};    // the first not yet popped of each
  std::size_t first_phase_ = kPhases;                    // no phase below it holds a key
  std::vector<Key> ties_;                                // scratch of advance()
  std::uint64_t last_ = 0;                               // the current time (ordered)
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_sequence_ = 0;
  std::size_t live_count_ = 0;
};

}  // namespace fleetcast::engine
