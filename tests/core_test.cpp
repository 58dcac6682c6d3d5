// Tests of core: the layout's token labels and their binding to tokens; the process supervisor.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/compiled_mask.h"
#include "core/layout.h"
#include "core/supervisor.h"
#include "tests/test_util.h"

namespace maskprior {
namespace {

using testing::input_error;
using testing::spec_error;

// ---------------------------------------------------------------------------------------------
// Token labels: Layout::token_label and its inverse Layout::token_index.

/// `cls, x[4], op, y[12]`: spans of one token print bare, the others with an index.
Layout mixed_layout() {
  return make_layout({{"cls", 1}, {"x", 4}, {"op", 1}, {"y", 12}});
}

TEST(Layout, TokenLabelsAndIndicesRoundTrip) {
  const Layout layout = mixed_layout();
  ASSERT_EQ(layout.size(), 18);
  EXPECT_EQ(layout.token_label(0), "cls");
  EXPECT_EQ(layout.token_label(1), "x[0]");
  EXPECT_EQ(layout.token_label(5), "op");
  EXPECT_EQ(layout.token_label(17), "y[11]");
  EXPECT_EQ(layout.token_label(18), "#18");  // past the end: no span holds it
  for (int64_t t = 0; t < layout.size(); ++t) {
    EXPECT_EQ(layout.token_index(layout.token_label(t)), t) << layout.token_label(t);
  }
}

TEST(Layout, TokenIndexReadsEveryLabelForm) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(layout.token_index("x[3]"), 4);
  EXPECT_EQ(layout.token_index("x3"), 4);    // span x, index 3
  EXPECT_EQ(layout.token_index("y11"), 17);  // a two-digit index
  EXPECT_EQ(layout.token_index("cls"), 0);
  EXPECT_EQ(layout.token_index("before x[0]"), 0);
  EXPECT_EQ(layout.token_index("before before op"), 3);
  EXPECT_EQ(layout.token_index("before y[0]"), 5);
}

TEST(Layout, TokenIndexRefusesWhatNamesNoToken) {
  const Layout layout = mixed_layout();
  for (const std::string label :
       {"x[4]", "x4", "x", "y", "z[0]", "before cls", "x[-1]", "x[]", "x[1", "x[a]", "[0]", "3", "",
        "cls[0]x", "x[1]]", "before ", "x[99999999999999999999]"}) {
    EXPECT_EQ(layout.token_index(label), std::nullopt) << label;
  }
}

TEST(Layout, TokensOfReadsTokensSpansAndTheRowsBeforeASpan) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(layout.tokens_of("x[3]"), (std::vector<int64_t>{4}));
  EXPECT_EQ(layout.tokens_of("cls"), (std::vector<int64_t>{0}));
  EXPECT_EQ(layout.tokens_of("x"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(layout.tokens_of("before x"), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(layout.tokens_of("before op"), (std::vector<int64_t>{4}));
  for (const std::string label : {"before cls", "z", "before z", "x[4]", ""}) {
    EXPECT_EQ(layout.tokens_of(label), std::vector<int64_t>{}) << label;
  }
}

TEST(CompiledMask, IsCausalWhenEveryCellAboveTheDiagonalIsHard) {
  CompiledMask mask;
  mask.n = 3;
  EXPECT_FALSE(is_causal(mask));  // no hard mask
  mask.hard.emplace(9, uint8_t{0});
  for (int64_t q = 0; q < 3; ++q) {
    for (int64_t k = q + 1; k < 3; ++k) (*mask.hard)[static_cast<size_t>(q * 3 + k)] = 1;
  }
  EXPECT_TRUE(is_causal(mask));
  (*mask.hard)[2] = 0;  // row 0 may read token 2
  EXPECT_FALSE(is_causal(mask));
}

// ---------------------------------------------------------------------------------------------
// Binding a table's column names to tokens (maskc validate/train --truth-table).

/// The error at label i of a table `file` with the header `header` of two-letter names, label i
/// at byte 3i + 1: as a truth table's TruthTable::input_error makes it.
std::function<SpecError(size_t, const std::string&)> at_label(const std::string& file,
                                                              const std::string& header = "") {
  return [=](size_t i, const std::string& message) {
    Diagnostic d;
    d.where = {file, 1, 3 * static_cast<int>(i) + 1};
    d.message = message;
    d.source_line = header;
    return SpecError(d);
  };
}

TEST(BindTokenLabels, BindsColumnsInOrder) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(bind_token_labels(layout, {"x2", "y[0]", "op", "x[0]"}, "s", at_label("t.csv")),
            (std::vector<int64_t>{3, 6, 5, 1}));
  EXPECT_EQ(bind_token_labels(layout, {}, "s", at_label("t.csv")), std::vector<int64_t>{});
}

TEST(BindTokenLabels, NamesTheFileTheColumnAndTheSpec) {
  const Layout layout = mixed_layout();
  EXPECT_EQ(spec_error([&] {
              bind_token_labels(layout, {"x0", "z9"}, "hand", at_label("b.csv", "x0,z9"));
            }),
            "b.csv:1:4: error: column 'z9' names no token of spec 'hand' (tokens are named like "
            "y[11])\n  x0,z9\n     ^");
  EXPECT_EQ(spec_error([&] {
              bind_token_labels(layout, {"x0", "x[0]"}, "hand", at_label("t.csv"));
            }),
            "t.csv:1:4: error: columns 'x0' and 'x[0]' both name token x[0]");
  EXPECT_EQ(spec_error([&] {
              bind_token_labels(layout, {"cls", "before x0"}, "s", at_label("t.csv"));
            }),
            "t.csv:1:4: error: columns 'cls' and 'before x0' both name token cls");
  // Echoed input is inert: a control or invisible character in a column name is escaped.
  EXPECT_EQ(spec_error([&] { bind_token_labels(layout, {"a\x1b[31m"}, "s", at_label("c.csv")); }),
            "c.csv:1:1: error: column 'a\\x1b[31m' names no token of spec 's' (tokens are named "
            "like y[11])");
  EXPECT_EQ(
      spec_error([&] { bind_token_labels(layout, {"\xef\xbb\xbfx0"}, "s", at_label("c.csv")); }),
      "c.csv:1:1: error: column '\\ufeffx0' names no token of spec 's' (tokens are named "
      "like y[11])");
  // A layout of one token has no last token worth showing as an example.
  EXPECT_EQ(spec_error([&] {
              bind_token_labels(make_layout({{"cls", 1}}), {"x"}, "s", at_label("o.csv"));
            }),
            "o.csv:1:1: error: column 'x' names no token of spec 's' (tokens are named like x[0])");
}

// ---------------------------------------------------------------------------------------------
// The process supervisor (maskc reproduce --jobs, maskc launch).

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::vector<int> statuses_by_child(const Supervision& s, size_t children) {
  std::vector<int> statuses(children, -1);  // -1: never started
  for (const ChildExit& e : s.exits) statuses[e.child] = e.status;
  return statuses;
}

TEST(Supervise, ReportsExitStatusesAsAShellDoes) {
  const std::vector<ChildProcess> children = {
      {"ok", [] { return 0; }},
      {"three",
       [] {
         sleep_ms(100);
         return 3;
       }},
      {"killed",
       [] {
         sleep_ms(300);
         return ::raise(SIGKILL);
       }},
      {"throws",
       []() -> int {
         sleep_ms(500);
         throw std::runtime_error("boom");
       }},
  };
  SuperviseOptions options;
  options.parallel = 4;
  const Supervision s = supervise(children, options);
  EXPECT_EQ(statuses_by_child(s, 4), (std::vector<int>{0, 3, 128 + SIGKILL, 1}));
  ASSERT_NE(s.first_failure(), nullptr);
  EXPECT_EQ(s.first_failure()->child, 1u);  // the first to end with a non-zero status
  EXPECT_EQ(s.signal, 0);
  for (const ChildExit& e : s.exits) EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(supervise({{"ok", [] { return 0; }}}, options).first_failure(), nullptr);
  EXPECT_TRUE(supervise({}, options).exits.empty());
}

// While children run, on_tick is called with the running ones (a sweep's status lines); never at
// the start, and not at all without an interval.
TEST(Supervise, TicksNameTheRunningChildren) {
  const std::vector<ChildProcess> children = {
      {"quick", [] { return 0; }},
      {"slow",
       [] {
         sleep_ms(1000);
         return 0;
       }},
  };
  SuperviseOptions options;
  options.parallel = 2;
  std::vector<std::vector<size_t>> ticks;
  options.on_tick = [&](const std::vector<size_t>& running) { ticks.push_back(running); };
  options.tick_every = std::chrono::milliseconds(100);
  const auto start = std::chrono::steady_clock::now();
  const Supervision s = supervise(children, options);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(statuses_by_child(s, 2), (std::vector<int>{0, 0}));
  ASSERT_FALSE(ticks.empty()) << "1 s of a running child, a tick every 0.1 s";
  EXPECT_LE(ticks.size(), static_cast<size_t>(elapsed / options.tick_every)) << "not every poll";
  EXPECT_EQ(ticks.back(), (std::vector<size_t>{1}));  // the quick one has long ended
  ticks.clear();
  options.tick_every = std::chrono::milliseconds(0);
  supervise(children, options);
  EXPECT_TRUE(ticks.empty());
}

TEST(Supervise, RunsAtMostParallelChildrenAtOnce) {
  const std::string log = ::testing::TempDir() + "supervise_parallel.log";
  std::remove(log.c_str());
  auto note = [log](const std::string& line) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const std::string text = line + "\n";
    const bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    if (fd >= 0) ::close(fd);
    return ok;
  };
  std::vector<ChildProcess> children;
  for (int i = 0; i < 5; ++i) {
    children.push_back({std::to_string(i), [note] {
                          if (!note("+")) return 1;
                          sleep_ms(150);
                          return note("-") ? 0 : 1;
                        }});
  }
  SuperviseOptions options;
  options.parallel = 2;
  const Supervision s = supervise(children, options);
  EXPECT_EQ(statuses_by_child(s, 5), (std::vector<int>(5, 0)));
  std::ifstream in(log);
  int now = 0, most = 0, lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    now += line == "+" ? 1 : -1;
    most = std::max(most, now);
  }
  EXPECT_EQ(lines, 10);
  EXPECT_EQ(most, 2);
  std::remove(log.c_str());
}

extern "C" void count_term(int) {}

TEST(Supervise, PassesSignalsOnAndStartsNoMoreChildren) {
  // A handler of the test's own, which supervise must put back.
  struct sigaction mine {};
  mine.sa_handler = count_term;
  sigemptyset(&mine.sa_mask);
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGTERM, &mine, &before), 0);
  // The first child sends SIGTERM to the supervisor, which passes it on: the child ends by it.
  std::vector<ChildProcess> children = {{"first", [] {
                                           ::kill(::getppid(), SIGTERM);
                                           sleep_ms(20'000);
                                           return 0;
                                         }}};
  for (int i = 0; i < 3; ++i) children.push_back({"never", [] { return 0; }});
  SuperviseOptions options;
  options.parallel = 1;
  const auto start = std::chrono::steady_clock::now();
  const Supervision s = supervise(children, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_EQ(s.exits.size(), 1u);  // no child started after the signal, and supervise returned
  EXPECT_EQ(s.exits[0].status, 128 + SIGTERM);
  EXPECT_EQ(s.exits[0].signal, SIGTERM);
  EXPECT_EQ(s.signal, SIGTERM);
  EXPECT_TRUE(is_stop_status(s.exits[0].status));
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGTERM, &before, &after), 0);
  EXPECT_EQ(after.sa_handler, count_term);
}

TEST(Supervise, StopsTheOthersAfterAFailure) {
  const std::vector<ChildProcess> children = {
      {"fails",
       [] {
         sleep_ms(500);
         return 2;
       }},
      {"stops",
       [] {
         sleep_ms(20'000);
         return 0;
       }},
      {"ignores SIGTERM",
       [] {
         std::signal(SIGTERM, SIG_IGN);
         sleep_ms(20'000);
         return 0;
       }},
      {"never", [] { return 0; }},
  };
  SuperviseOptions options;
  options.parallel = 3;
  options.stop_others_on_failure = std::chrono::milliseconds(200);
  std::vector<ChildExit> noticed;
  options.on_stopping_others = [&](const ChildExit& e) { noticed.push_back(e); };
  const auto start = std::chrono::steady_clock::now();
  const Supervision s = supervise(children, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(statuses_by_child(s, 4), (std::vector<int>{2, 128 + SIGTERM, 128 + SIGKILL, -1}));
  ASSERT_EQ(noticed.size(), 1u);
  EXPECT_EQ(noticed[0].child, 0u);
  EXPECT_EQ(noticed[0].status, 2);
  EXPECT_EQ(s.first_failure()->child, 0u);
  EXPECT_EQ(s.signal, 0);  // stopping the others is no signal passed on
}

TEST(Supervise, ACleanStopDoesNotStopTheOthers) {
  const std::vector<ChildProcess> children = {
      {"stopped", [] { return 128 + SIGINT; }},
      {"finishes",
       [] {
         sleep_ms(400);
         return 0;
       }},
  };
  SuperviseOptions options;
  options.parallel = 2;
  options.stop_others_on_failure = std::chrono::milliseconds(0);
  bool noticed = false;
  options.on_stopping_others = [&](const ChildExit&) { noticed = true; };
  const Supervision s = supervise(children, options);
  EXPECT_EQ(statuses_by_child(s, 2), (std::vector<int>{130, 0}));
  EXPECT_FALSE(noticed);
  EXPECT_EQ(s.first_failure()->status, 130);
}

TEST(Supervise, PutsEachChildInItsOwnProcessGroupWhenAsked) {
  const pid_t group = ::getpgrp();
  SuperviseOptions options;
  const std::vector<ChildProcess> in_ours = {
      {"ours", [group] { return ::getpgrp() == group ? 0 : 1; }}};
  EXPECT_EQ(supervise(in_ours, options).exits.at(0).status, 0);
  options.own_process_group = true;
  const std::vector<ChildProcess> own = {{"own", [] { return ::getpgrp() == ::getpid() ? 0 : 1; }}};
  EXPECT_EQ(supervise(own, options).exits.at(0).status, 0);
}

// A supervisor killed outright (SIGKILL: nothing of it runs) leaves no child running as an orphan:
// each is sent SIGTERM. This test process adopts the orphans (a subreaper) to see how they end.
TEST(Supervise, ChildrenEndWhenTheSupervisorIsKilled) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int pids[2];
  ASSERT_EQ(::pipe(pids), 0);
  const pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    ::close(pids[0]);
    const int out = pids[1];
    const std::vector<ChildProcess> children(
        2, ChildProcess{"waits", [out] {
                          const pid_t me = ::getpid();
                          if (::write(out, &me, sizeof me) != sizeof me) return 1;
                          for (;;) ::pause();
                        }});
    SuperviseOptions options;
    options.parallel = 2;
    supervise(children, options);
    ::_exit(0);
  }
  ::close(pids[1]);
  std::vector<pid_t> children(2);
  for (pid_t& child : children) ASSERT_EQ(::read(pids[0], &child, sizeof child), sizeof child);
  ::close(pids[0]);
  ::kill(supervisor, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  for (const pid_t child : children) {
    // An orphan would pause for ever: give up (and fail) after a minute, however loaded the
    // machine; a child that ends does so at once.
    pid_t done = 0;
    for (int i = 0; i < 600 && done == 0; ++i) {
      done = ::waitpid(child, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (done == 0) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ADD_FAILURE() << "child " << child << " kept running after its supervisor was killed";
      continue;
    }
    ASSERT_EQ(done, child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  }
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

TEST(Supervise, StopStatuses) {
  EXPECT_TRUE(is_stop_status(130));
  EXPECT_TRUE(is_stop_status(143));
  for (int status : {0, 1, 2, 129, 137, 131}) EXPECT_FALSE(is_stop_status(status)) << status;
}

}  // namespace
}  // namespace maskprior
