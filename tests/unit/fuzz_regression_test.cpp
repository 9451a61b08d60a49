// Inputs found by the fuzz targets (fuzz/, docs/security.md "Fuzzing, sanitizers and crash
// consistency"), kept as regression tests in the normal suite with the values they must give.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "astraeus/config/tenant_config.hpp"
#include "astraeus/goodput_io/event_log.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/request_parse.hpp"

using namespace astraeus;
using namespace astraeus::goodput;

namespace {

Result<void> replay(const std::string& log, Replayer& r) {
    std::istringstream in(log);
    return replay_stream(in, "f.jsonl", r);
}

}  // namespace

// fuzz_event_log, timeout: a utilization sample 57 years after the run started made the replay
// walk 30 million minutes and 500,000 hour boundaries (minutes of CPU for a 4-line log). Runs now
// go without a break for at most 800 days: the 4th line is the error.
TEST(FuzzRegression, EventLogDecadesLaterIsAnErrorNotAHang) {
    const std::string log =
        R"({"t":1793613600,"event":"submit","run":"r","workspace":"ml","pool":"a100","gpus":2})" "\n"
        R"({"t":1793613600,"event":"place","run":"r","worker":0,"machine":"m1"})" "\n"
        R"({"t":1793613600,"event":"start","run":"r","worker":0})" "\n"
        R"({"t":3587227260,"event":"util","run":"r","worker":0,"gpus_pct":[4294967295,null]})" "\n"
        R"({"t":3587227300,"event":"end","run":"r"})" "\n";
    Replayer r;
    auto res = replay(log, r);
    ASSERT_FALSE(res);
    EXPECT_EQ(res.error().message,
              "f.jsonl:4: time 2083-09-03T20:01:00Z is more than 800 days after 2026-11-02T10:00:00Z, "
              "since when runs have been going without a break (at most 800 days: replay the log in parts)");
}

// The bound is inclusive: a run waiting exactly 800 days (69,120,000 s) is counted (2 GPUs x
// 69,120,000 s = 138,240,000 waiting GPU-seconds); one second more is an error, for an event and
// for --end alike. A quiet gap of years stays free (GoodputScenario.AQuietGapOfYears...).
TEST(FuzzRegression, EventLogBusySpanBoundIs800Days) {
    const std::string sub =
        R"({"t":1793613600,"event":"submit","run":"a","workspace":"ml","pool":"p","gpus":2})" "\n";
    Replayer ok;
    ASSERT_TRUE(replay(sub + R"({"t":1862733600,"event":"end","run":"a"})" "\n", ok));
    const Counts a = ok.ledger().run_total(ok.run_id("a"));
    EXPECT_EQ(a.not_held_of(Category::Waiting), 138'240'000);
    EXPECT_EQ(a.held, (std::array<GpuSeconds, kCategories>{}));
    Replayer late;
    auto res = replay(sub + R"({"t":1862733601,"event":"end","run":"a"})" "\n", late);
    ASSERT_FALSE(res);
    EXPECT_EQ(res.error().message,
              "f.jsonl:2: time 2029-01-10T10:00:01Z is more than 800 days after 2026-11-02T10:00:00Z, "
              "since when runs have been going without a break (at most 800 days: replay the log in parts)");
    ReplayOptions o;
    o.end_s = 1862733601;
    Replayer with_end(o);
    auto e = replay(sub, with_end);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message,
              "f.jsonl: the end 2029-01-10T10:00:01Z is more than 800 days after 2026-11-02T10:00:00Z, "
              "since when runs have been going without a break (at most 800 days: replay the log in parts)");
}

// fuzz_rest_body, crash (uncaught exception): a progress body with a number beyond a double
// ("6666666e666") made nlohmann::json throw out_of_range, which the parser did not catch (only
// parse_error): POST /v1/runs/NAME/progress answered 500 "internal error". Now a 400.
TEST(FuzzRegression, ProgressBodyWithAHugeNumberIsA400) {
    auto r = service::parse_progress_body("6666666e666");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().status, 400);
    EXPECT_EQ(r.error().message.rfind("malformed JSON: ", 0), 0u) << r.error().message;
    EXPECT_NE(r.error().message.find("number overflow"), std::string::npos) << r.error().message;
    auto s = service::parse_submit_body(R"({"name":"x","workers":1e400})");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().status, 400);
}

// fuzz_service_config: a machine group's "gpus" of 8.1e80 was converted to int (undefined
// behaviour); an integer key out of range, or a fraction, is now a clear error.
TEST(FuzzRegression, ConfigIntegerOutOfRangeIsAnError) {
    const auto cfg = [](const std::string& gpus) {
        return R"({"organization": "acme", "cluster": "c1", "pools": [{"name": "default", "machines": [{"count": 4, "gpus": )" +
               gpus + "}]}]}";
    };
    auto ok = astraeus::service::parse_config(cfg("8"), "c.json");
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->pools.at(0).machines.at(0).gpus, 8);
    for (const char* bad : {"811111111111111111111111111111111111111111111111111111111111111111111111111111111",
                            "8.5", "4294967304", "-9223372036854775808"}) {
        auto r = astraeus::service::parse_config(cfg(bad), "c.json");
        EXPECT_FALSE(r) << bad;  // out of int range, a fraction, int wrap-around to 8, or gpus < 1
    }
}

// fuzz_tenant_config: a number too large for a double (4e510) made nlohmann throw out_of_range,
// which the reader did not catch (only parse_error): the process aborted. Now a clear error.
TEST(FuzzRegression, TenantFileWithAHugeNumberIsAnError) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("astraeus-fuzz-tenants-" + std::to_string(::getpid()) + ".json")).string();
    { std::ofstream(path) << R"({"tenants": [{"name": "a", "weight": 4e510}]})"; }
    auto t = read_tenant_config(path, "");
    std::filesystem::remove(path);
    ASSERT_FALSE(t);
    EXPECT_NE(t.error().message.find("not valid JSON"), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("4e510"), std::string::npos) << t.error().message;
}
