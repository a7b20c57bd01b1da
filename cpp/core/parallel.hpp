// Runs fn(task) for task in [0, n_tasks) on up to `threads` threads (0 = all cores), the calling
// thread included, and rethrows the first worker exception after every thread has joined.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mirkit::core {

inline unsigned resolve_threads(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return threads;
}

template <class Fn>
void parallel_for(size_t n_tasks, unsigned threads, Fn&& fn) {
  threads = static_cast<unsigned>(std::min<size_t>(resolve_threads(threads), n_tasks));
  if (threads <= 1) {
    for (size_t t = 0; t < n_tasks; ++t) fn(t);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t t; (t = next.fetch_add(1)) < n_tasks;) {
      try {
        fn(t);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(n_tasks);
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace mirkit::core
