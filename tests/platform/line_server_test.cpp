// A child that answers line after line: answers come back in order, a child that ends or keeps silent gives
// no answer and says why, its stderr is kept, and stopping it ends it even where it ignores its stdin.
#include "pmlab/platform/line_server.hpp"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

#include "../support/temp_dir.hpp"

namespace pmlab::platform {
namespace {

std::unique_ptr<LineServer> started(const std::string& script, const std::string& log = "") {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.output_file = log;
  auto server = LineServer::start(spec);
  EXPECT_TRUE(server.ok()) << server.status().message();
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(LineServer, AnswersComeBackInOrderAndItsStderrIsKept) {
  testing::TempDir dir;
  auto server = started("while read -r l; do echo \"got $l\"; echo \"noted $l\" >&2; done", dir.file("err"));
  ASSERT_NE(server, nullptr);
  for (const char* request : {"a", "second one", "{\"PMLAB_CRASH_IMAGE\": \"/x y\"}"}) {
    const auto answer = server->ask(request, 10);
    ASSERT_TRUE(answer.answered) << answer.why;
    EXPECT_EQ(answer.line, std::string("got ") + request);
  }
  server->stop();
  EXPECT_FALSE(server->running());
  EXPECT_EQ(testing::read_all(dir.file("err")), "noted a\nnoted second one\nnoted {\"PMLAB_CRASH_IMAGE\": \"/x y\"}\n");
}

TEST(LineServer, OneThatEndsGivesNoAnswerAndSaysHow) {
  auto exits = started("read -r l; printf partial-without-newline; exit 3");
  ASSERT_NE(exits, nullptr);
  auto answer = exits->ask("x", 10);
  EXPECT_FALSE(answer.answered);
  EXPECT_EQ(answer.why, "exited with 3");
  EXPECT_EQ(answer.exit_code, 3);
  EXPECT_FALSE(exits->running());
  EXPECT_FALSE(exits->ask("again", 10).answered) << "a server that ended answers nothing more";

  auto killed = started("read -r l; kill -SEGV $$");
  ASSERT_NE(killed, nullptr);
  answer = killed->ask("x", 10);
  EXPECT_FALSE(answer.answered);
  EXPECT_EQ(answer.why, "killed by signal 11 (SIGSEGV)");

  // Gone before the request: the write fails (no SIGPIPE kills this process) and the end is reported.
  auto gone = started("exit 5");
  ASSERT_NE(gone, nullptr);
  usleep(200 * 1000);
  answer = gone->ask("x", 10);
  EXPECT_FALSE(answer.answered);
  EXPECT_EQ(answer.why, "exited with 5");
}

TEST(LineServer, OneThatKeepsSilentIsKilledAtItsTimeout) {
  auto silent = started("read -r l; sleep 30");
  ASSERT_NE(silent, nullptr);
  const auto begin = std::chrono::steady_clock::now();
  const auto answer = silent->ask("x", 0.3);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_FALSE(answer.answered);
  EXPECT_TRUE(answer.timed_out);
  EXPECT_GE(waited, 0.3);
  EXPECT_LT(waited, 5.0);
  EXPECT_FALSE(silent->running());
}

TEST(LineServer, StoppingEndsEvenAServerThatIgnoresItsInput) {
  auto stubborn = started("trap '' TERM HUP; while :; do sleep 1; done");
  ASSERT_NE(stubborn, nullptr);
  const auto begin = std::chrono::steady_clock::now();
  stubborn->stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), 5.0);
  EXPECT_FALSE(stubborn->running());
}

TEST(LineServer, AProgramThatDoesNotExistIsAnError) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/server"};
  EXPECT_FALSE(LineServer::start(spec).ok());
}

}  // namespace
}  // namespace pmlab::platform
