// Unit tests of the REST request parsers (service/request_parse.hpp) that the fuzz targets
// drive (fuzz/fuzz_rest_body.cpp, fuzz/fuzz_query_params.cpp): accepted values, defaults and the
// 400s, with values worked out by hand. Regression inputs found by fuzzing are kept here too
// (docs/security.md, "Fuzzing, sanitizers and crash consistency").
#include <gtest/gtest.h>

#include "astraeus/service/request_parse.hpp"

using namespace astraeus;
using namespace astraeus::service;

TEST(RequestParse, SubmitBodyValuesAndDefaults) {
    auto r = parse_submit_body(R"({"name":"llm","workers":2,"gpus_per_worker":8,"sim_duration_s":600,"command":"train.py"})");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->name, "llm");
    EXPECT_EQ(r->workers, 2);
    EXPECT_EQ(r->gpus_per_worker, 8);
    EXPECT_EQ(r->sim_duration_s, 600);
    EXPECT_EQ(r->time_limit_s, 0);  // absent: none
    EXPECT_EQ(r->command.argv, (std::vector<std::string>{"/bin/sh", "-c", "train.py"}));  // a string: sh -c
    EXPECT_TRUE(r->command.env.empty());
    EXPECT_EQ(r->command.workdir, "");
    EXPECT_FALSE(r->command.running_at_progress);  // default "up"
    EXPECT_EQ(r->pool, "");
    auto d = parse_submit_body(R"({"name":"a","workers":null})");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->workers, 1);  // null = absent = 1
    EXPECT_EQ(d->gpus_per_worker, 1);
    EXPECT_TRUE(d->command.argv.empty());  // no command: a simulated run (submit decides)
}

TEST(RequestParse, SubmitBodyCommandEnvWorkdirRunningAt) {
    auto r = parse_submit_body(R"({"name":"ddp","command":["python3","train.py","--lr","0.1"],)"
                               R"("env":{"NCCL_DEBUG":"INFO","_X1":""},"workdir":"/data/ddp","running_at":"progress"})");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->command.argv, (std::vector<std::string>{"python3", "train.py", "--lr", "0.1"}));
    EXPECT_EQ(r->command.env.size(), 2u);
    EXPECT_EQ(r->command.env.at("NCCL_DEBUG"), "INFO");
    EXPECT_EQ(r->command.env.at("_X1"), "");
    EXPECT_EQ(r->command.workdir, "/data/ddp");
    EXPECT_TRUE(r->command.running_at_progress);
    auto up = parse_submit_body(R"({"name":"a","command":"echo hi","running_at":"up","env":null,"workdir":null})");
    ASSERT_TRUE(up) << up.error().message;
    EXPECT_FALSE(up->command.running_at_progress);
    EXPECT_TRUE(up->command.env.empty());
}

TEST(RequestParse, SubmitBodyErrorsAre400s) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"name": "x", workers: })", "malformed JSON"},
        {R"([1])", "the body must be a JSON object"},
        {R"({"name":"x","colour":"red"})", "unknown field 'colour'"},
        {R"({"workers":1})", "'name' is required"},
        {R"({"name":"x","workers":"two"})", "'workers' must be an integer"},
        {R"({"name":"x","workers":4097})", "'workers' must be in 1..4096"},
        // Whole numbers past 64 bits (parsed as a float) or past INT64_MAX (unsigned): out of
        // range, not "not an integer"; a fraction stays "not an integer".
        {R"({"name":"x","workers":99999999999999999999999})", "'workers' must be in 1..4096"},
        {R"({"name":"x","time_limit_s":18446744073709551615})", "'time_limit_s' must be in 1..315360000"},
        {R"({"name":"x","workers":2.5})", "'workers' must be an integer"},
        {R"({"name":"x","gpus_per_worker":0})", "'gpus_per_worker' must be in 1..1024"},
        {R"({"name":"-x"})", "bad run name '-x'"},
        {R"({"name":7})", "'name' must be a string"},
        {R"({"name":"x","image":"nvcr.io/pytorch:24.01"})", "'image' is not supported"},
        {R"({"name":"x","command":[]})", "'command' must not be an empty array"},
        {R"({"name":"x","command":["a",1]})", "'command' must be an array of strings"},
        {R"({"name":"x","command":["","a"]})", "'command' must start with a program"},
        {R"({"name":"x","command":7})", "'command' must be an argv array of strings, or a string"},
        {R"({"name":"x","command":["a\u0000b"]})", "must not hold NUL"},
        {R"({"name":"x","env":["A"]})", "'env' must be an object of strings"},
        {R"({"name":"x","env":{"1A":"v"}})", "'env': bad variable name '1A'"},
        {R"({"name":"x","env":{"A-B":"v"}})", "'env': bad variable name 'A-B'"},
        {R"({"name":"x","env":{"A":1}})", "'env': the value of A must be a string"},
        {R"({"name":"x","workdir":"data"})", "'workdir' must be an absolute path"},
        {R"({"name":"x","workdir":5})", "'workdir' must be a string"},
        {R"({"name":"x","running_at":"later"})", "'running_at' must be"},
    };
    for (const auto& [body, message] : cases) {
        auto r = parse_submit_body(body);
        ASSERT_FALSE(r) << body;
        EXPECT_EQ(r.error().status, 400) << body;
        EXPECT_NE(r.error().message.find(message), std::string::npos) << body << " -> " << r.error().message;
    }
}

TEST(RequestParse, ProgressReports) {
    auto j = parse_progress_body(R"({"steps": [10, 12, 0]})");
    ASSERT_TRUE(j);
    auto r = progress_reports(*j, 3);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ((*r)[1], (std::pair<int, std::int64_t>{1, 12}));
    EXPECT_FALSE(progress_reports(*j, 2));  // 3 counters for a gang of 2
    auto one = progress_reports(*parse_progress_body(R"({"worker": 1, "step": 5})"), 2);
    ASSERT_TRUE(one);
    EXPECT_EQ(one->front(), (std::pair<int, std::int64_t>{1, 5}));
    auto out = progress_reports(*parse_progress_body(R"({"worker": 2, "step": 5})"), 2);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().message, "'worker' must be an index from 0 to 1");
    EXPECT_FALSE(progress_reports(*parse_progress_body(R"({"steps": [1, -1]})"), 2));
    EXPECT_FALSE(parse_progress_body("{"));
}

TEST(RequestParse, GoodputWindow) {
    const Seconds now = 1'790'000'000;
    auto w = parse_goodput_window({}, now);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->end, now);
    EXPECT_EQ(w->start, now - 7 * 86400);  // default: the 7 days up to now
    auto d = parse_goodput_window({{"days", "3"}, {"end", "2026-10-01T00:00:00Z"}, {"by", "run"}}, now);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->end, 1'790'812'800);  // 2026-10-01: 20,727 days x 86,400 s
    EXPECT_EQ(d->start, 1'790'812'800 - 3 * 86400);
    EXPECT_EQ(d->by, goodput::By::Run);
    // An empty period (start = end) is valid: zero rows.
    auto empty = parse_goodput_window({{"start", "2026-10-01T00:00:00Z"}, {"end", "2026-10-01T00:00:00Z"}}, now);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->start, empty->end);
    EXPECT_FALSE(parse_goodput_window({{"days", "3"}, {"start", "2026-10-01T00:00:00Z"}}, now));
    EXPECT_FALSE(parse_goodput_window({{"days", "0"}}, now));
    EXPECT_FALSE(parse_goodput_window({{"days", "1234567"}}, now));  // 7 digits
    EXPECT_FALSE(parse_goodput_window({{"colour", "red"}}, now));
    auto bad_by = parse_goodput_window({{"by", "galaxy"}}, now);
    ASSERT_FALSE(bad_by);
    EXPECT_EQ(bad_by.error().status, 400);
}

TEST(RequestParse, GoodputWindowStartAfterDefaultEndSaysTheEndIsNow) {
    const Seconds now = 1'790'812'800;  // 2026-10-01T00:00:00Z
    auto w = parse_goodput_window({{"start", "2030-01-01T00:00:00Z"}}, now);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().status, 400);
    EXPECT_EQ(w.error().message,
              "the period's start 2030-01-01T00:00:00Z is after its end 2026-10-01T00:00:00Z "
              "(now: 'end' defaults to now; give 'end')");
    auto given = parse_goodput_window({{"start", "2030-01-01T00:00:00Z"}, {"end", "2026-10-01T00:00:00Z"}}, now);
    ASSERT_FALSE(given);
    EXPECT_EQ(given.error().message,
              "the period's start 2030-01-01T00:00:00Z is after its end 2026-10-01T00:00:00Z (the given 'end')");
}

TEST(RequestParse, WeeklyAndRunsQueries) {
    auto w = parse_weekly_query({});
    ASSERT_TRUE(w);
    EXPECT_EQ(w->weeks, 8);
    auto w2 = parse_weekly_query({{"weeks", "56"}, {"by", "pool"}});
    ASSERT_TRUE(w2);
    EXPECT_EQ(w2->weeks, 56);
    EXPECT_EQ(w2->by, goodput::By::Pool);
    EXPECT_FALSE(parse_weekly_query({{"weeks", "57"}}));
    EXPECT_FALSE(parse_weekly_query({{"weeks", "-1"}}));
    EXPECT_TRUE(check_runs_query({{"state", "running"}}));
    EXPECT_FALSE(check_runs_query({{"state", "bogus"}}));
}
