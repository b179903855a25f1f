#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fleetcast {

namespace {

// The library's default executor: a fixed set of threads over one FIFO queue.
class ThreadPool final : public Executor {
 public:
  explicit ThreadPool(int threads) {
    threads_.reserve(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { serve(); });
  }
  ~ThreadPool() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& thread : threads_) thread.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> task) override {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
  }
  [[nodiscard]] int concurrency() const override { return static_cast<int>(threads_.size()); }

 private:
  // Runs tasks until the pool stops and its queue is empty.
  void serve() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// The state of one run_indexed call, shared with the tasks it submitted: a task that starts after
// the call returned finds `next` past `count` and never touches `body`.
struct IndexedWork {
  IndexedWork(std::size_t index_count, const std::function<void(std::size_t)>* index_body)
      : count(index_count), body(index_body) {}

  // Takes indexes until none is left.
  void work() {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      (*body)(i);
      std::lock_guard lock(mutex);
      if (++finished == count) all_finished.notify_all();
    }
  }
  void wait() {
    std::unique_lock lock(mutex);
    all_finished.wait(lock, [this] { return finished == count; });
  }

  const std::size_t count;
  const std::function<void(std::size_t)>* const body;
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::condition_variable all_finished;
  std::size_t finished = 0;
};

}  // namespace

std::unique_ptr<Executor> make_thread_pool(int threads) {
  return std::make_unique<ThreadPool>(resolve_thread_count(threads));
}

int resolve_thread_count(int threads) {
  if (threads > 0) return threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void run_indexed(Executor* executor, int threads, std::size_t count, const std::function<void(std::size_t)>& body) {
  if (count == 0) return;
  std::unique_ptr<Executor> own_pool;  // destroyed last: its destructor joins the helpers
  if (executor == nullptr) {
    const auto workers = std::min<std::size_t>(count, static_cast<std::size_t>(resolve_thread_count(threads)));
    if (workers > 1) own_pool = make_thread_pool(static_cast<int>(workers - 1));
    executor = own_pool.get();
  }
  auto work = std::make_shared<IndexedWork>(count, &body);
  if (executor != nullptr) {
    const auto helpers = std::min<std::size_t>(count - 1, static_cast<std::size_t>(std::max(1, executor->concurrency())));
    for (std::size_t h = 0; h < helpers; ++h) executor->submit([work] { work->work(); });
  }
  work->work();
  work->wait();
}

}  // namespace fleetcast
