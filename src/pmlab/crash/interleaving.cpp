#include "pmlab/crash/interleaving.hpp"

#include <algorithm>
#include <iterator>
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
  bool passed = false;
  for (unsigned step = 1; step <= n && !passed; ++step) {
    const unsigned next = (me + step) % n;
    if (!done_[next] && static_cast<int>(next) != parked_) {
      turn_ = next;
      passed = true;
    }
  }
  // Only the parked thread is left: it runs again.
  if (!passed && parked_ >= 0 && !done_[static_cast<unsigned>(parked_)]) {
    turn_ = static_cast<unsigned>(parked_);
    parked_ = -1;
  }
  turn_changed_.notify_all();
}

void Interleaving::count_towards_release(unsigned me) {
  if (parked_ < 0 || static_cast<int>(me) == parked_) return;
  if (parked_left_ <= 1) parked_ = -1;
  else --parked_left_;
}

void Interleaving::run(unsigned threads, const std::function<void(unsigned)>& body) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.assign(threads, false);
    turn_ = 0;
    active_ = true;
    parked_ = -1;
    alone_ = -1;
    std::fill(std::begin(countdown_), std::end(countdown_), 0u);
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
      if (alone_ == static_cast<int>(t)) alone_ = -1;
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
  count_towards_release(me);
  if (alone_ == static_cast<int>(me)) {
    if (alone_left_ > 0) {
      --alone_left_;
      return;
    }
    alone_ = -1;
  }
  if (countdown_[me] > 0 && --countdown_[me] == 0 && parked_ < 0) {
    parked_ = static_cast<int>(me);
    parked_left_ = park_hold_;
    pass_from(me);
    wait_turn(lock, me);
    return;
  }
  if (random_.next_below(switch_every_) != 0) return;
  pass_from(me);
  wait_turn(lock, me);
}

void Interleaving::hot_call() {
  if (tls_owner != this || (park_depth_ == 0 && alone_hold_ == 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const unsigned me = tls_thread;
  if (alone_hold_ > 0) {
    if (alone_ < 0) {
      alone_ = static_cast<int>(me);
      alone_left_ = alone_hold_;
    }
    return;
  }
  if (countdown_[me] == 0 && parked_ != static_cast<int>(me)) countdown_[me] = park_depth_;
}

void Interleaving::wait() {
  if (tls_owner != this) return;
  const unsigned me = tls_thread;
  std::unique_lock<std::mutex> lock(mutex_);
  // The others may all be waiting for the parked thread: their waits count towards its release. A
  // thread running alone that waits for another gives up its turn.
  count_towards_release(me);
  if (alone_ == static_cast<int>(me)) alone_ = -1;
  pass_from(me);
  wait_turn(lock, me);
}

}  // namespace pmlab::crash
