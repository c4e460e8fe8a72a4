#include "pmlab/crash/interleaving.hpp"

#include <thread>

namespace pmlab::crash {
namespace {

// The thread of run() this is, and the interleaving it belongs to (null on any other thread).
thread_local unsigned tls_thread = 0;
thread_local const Interleaving* tls_owner = nullptr;

}  // namespace

unsigned Interleaving::current() noexcept { return tls_thread; }

void Interleaving::wait_turn(std::unique_lock<std::mutex>& lock, unsigned me) {
  turn_changed_.wait(lock, [&] { return turn_ == me; });
}

void Interleaving::pass_from(unsigned me) {
  const auto n = static_cast<unsigned>(done_.size());
  for (unsigned step = 1; step <= n; ++step) {
    const unsigned next = (me + step) % n;
    if (!done_[next]) {
      turn_ = next;
      break;
    }
  }
  turn_changed_.notify_all();
}

void Interleaving::run(unsigned threads, const std::function<void(unsigned)>& body) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.assign(threads, false);
    turn_ = 0;
    active_ = true;
  }
  std::vector<std::thread> running;
  running.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) {
    running.emplace_back([this, t, &body] {
      tls_thread = t;
      tls_owner = this;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wait_turn(lock, t);
      }
      body(t);
      std::lock_guard<std::mutex> lock(mutex_);
      done_[t] = true;
      pass_from(t);
      tls_owner = nullptr;
    });
  }
  for (std::thread& t : running) t.join();
  std::lock_guard<std::mutex> lock(mutex_);
  active_ = false;
  done_.clear();
}

void Interleaving::point() {
  if (tls_owner != this) return;
  const unsigned me = tls_thread;
  std::unique_lock<std::mutex> lock(mutex_);
  if (random_.next_below(switch_every_) != 0) return;
  pass_from(me);
  wait_turn(lock, me);
}

}  // namespace pmlab::crash
