// The trace readers on small hand-made fixtures (tests/fixtures/{philly,helios,rfold,native}/).
// Expected instants were worked out by hand and checked with Python's zoneinfo; see the comments.
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "astraeus/trace/helios_csv.hpp"
#include "astraeus/trace/native_trace.hpp"
#include "astraeus/trace/philly_joblog.hpp"
#include "astraeus/trace/read_trace.hpp"
#include "astraeus/trace/rfold_csv.hpp"

namespace astraeus {
namespace {

const std::string kFixtures = ASTRAEUS_TESTS_DIR "/fixtures/";

std::string error_of(const Result<Workload>& r) {
    return r ? "" : r.error().message;
}

const Job& job(const Workload& w, std::int64_t id) {
    for (const Job& j : w.jobs)
        if (j.id == id) return j;
    ADD_FAILURE() << "no job " << id;
    static const Job none;
    return none;
}

std::string tenant_of(const Workload& w, std::int64_t id) {
    const Job& j = job(w, id);
    return j.tenant < 0 ? "" : w.tenants[static_cast<std::size_t>(j.tenant)].name;
}

// ---- Philly cluster_job_log ----

TEST(PhillyJoblog, ReadsAttemptsInPacificTime) {
    SkipCounts skips;
    auto w = read_philly_joblog(kFixtures + "philly/joblog.json", &skips);
    ASSERT_TRUE(w) << w.error().message;
    // The earliest submit is 2017-10-07 00:00:00 PDT = 07:00:00 UTC.
    EXPECT_EQ(w->epoch_unix_s, 1507359600);
    ASSERT_EQ(w->jobs.size(), 4u);
    const std::int64_t id1 = 1506638472019014199;   // application_1506638472019_14199
    const std::int64_t id2 = 1506638472019000002;   // application_1506638472019_2
    const std::int64_t id3 = 5303717388364769763;   // 2^62 + FNV-1a("job-with-odd-id") mod 2^62
    const std::int64_t id10 = 1506638472019014164;  // DRE-style flattened job
    // Sorted by submit.
    EXPECT_EQ(w->jobs[0].id, id3);
    EXPECT_EQ(w->jobs[1].id, id1);
    EXPECT_EQ(w->jobs[2].id, id10);
    EXPECT_EQ(w->jobs[3].id, id2);
    // Job 1: two attempts, 74 s (01:12:09-01:13:23) + 193182 s (10-07 01:13:30 .. 10-09 06:53:12);
    // 8 GPUs in the first attempt (the second used 2); submitted 01:11:39 = 4299 s after epoch.
    EXPECT_EQ(job(*w, id1).duration_s, 74 + 193182);
    EXPECT_EQ(job(*w, id1).gpus, 8);
    EXPECT_EQ(job(*w, id1).submit_s, 4299);
    EXPECT_EQ(job(*w, id1).name, "application_1506638472019_14199");
    // Job 2 runs across the end of DST: 01:40 PDT (08:40 UTC) .. 03:00 PST (11:00 UTC) = 8400 s,
    // not the 4800 s of zone-less subtraction; 2 + 2 GPUs on two machines; submitted 01:30 in the
    // repeated hour, read as PDT: 2017-11-05 08:30 UTC = 29 days + 1.5 h after the epoch.
    EXPECT_EQ(job(*w, id2).duration_s, 8400);
    EXPECT_EQ(job(*w, id2).gpus, 4);
    EXPECT_EQ(job(*w, id2).submit_s, 29 * 86400 + 5400);
    // Job 3 (Killed, non-standard id): kept, 60 s, 1 GPU, original id in name.
    EXPECT_EQ(job(*w, id3).duration_s, 60);
    EXPECT_EQ(job(*w, id3).gpus, 1);
    EXPECT_EQ(job(*w, id3).submit_s, 0);
    EXPECT_EQ(job(*w, id3).name, "job-with-odd-id");
    // The flattened DRE form: one attempt 10:00:05 .. 10:01:05, 2 GPUs, 1 day 10 h after epoch.
    EXPECT_EQ(job(*w, id10).duration_s, 60);
    EXPECT_EQ(job(*w, id10).gpus, 2);
    EXPECT_EQ(job(*w, id10).submit_s, 86400 + 10 * 3600);
    // Tenants = vc in first-appearance order over kept jobs, weight 1.
    ASSERT_EQ(w->tenants.size(), 3u);
    EXPECT_EQ(w->tenants[0].name, "vcA");
    EXPECT_EQ(w->tenants[1].name, "vcB");
    EXPECT_EQ(w->tenants[2].name, "vcC");
    EXPECT_EQ(w->tenants[2].weight, 1.0);
    EXPECT_EQ(w->share_order, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(tenant_of(*w, id3), "vcA");
    EXPECT_EQ(tenant_of(*w, id2), "vcB");
    // Six jobs skipped, by reason, in first-seen order.
    EXPECT_EQ(skips.total(), 6);
    EXPECT_EQ(skips.summary(),
              "6 (no attempts: 1, attempt without start or end time: 2, no submitted_time: 1, "
              "no GPUs in the first attempt: 1, repeated jobid: 1)");
}

TEST(PhillyJoblog, StableIds) {
    EXPECT_EQ(philly_job_id("application_1506638472019_14199"), 1506638472019014199);
    EXPECT_EQ(philly_job_id("application_1_0"), 1000000);
    // Leading zeros, too many digits, other forms: hashed into [2^62, 2^63).
    for (const char* s : {"application_1_01", "application_1_1234567", "x", ""}) {
        EXPECT_GE(philly_job_id(s), std::int64_t{1} << 62) << s;
        EXPECT_EQ(philly_job_id(s), philly_job_id(s));
    }
    EXPECT_NE(philly_job_id("a"), philly_job_id("b"));
}

TEST(PhillyJoblog, MalformedJobsNameFileLineJobAndField) {
    const std::string d = kFixtures + "philly/";
    EXPECT_EQ(error_of(read_philly_joblog(d + "bad_time.json")),
              d + "bad_time.json:4: job application_1_2: field 'submitted_time': expected a time "
                  "like 2017-10-03 14:24:30, got '2017-13-01 00:00:00'");
    EXPECT_EQ(error_of(read_philly_joblog(d + "bad_attempt_time.json")),
              d + "bad_attempt_time.json:1: job application_1_1: field 'start_time': expected a "
                  "time like 2017-10-03 14:24:30, got 'yesterday'");
    EXPECT_EQ(error_of(read_philly_joblog(d + "missing_vc.json")),
              d + "missing_vc.json:2: job application_1_1: field 'vc': expected a non-empty "
                  "string, got nothing");
    EXPECT_EQ(error_of(read_philly_joblog(d + "attempts_not_list.json")),
              d + "attempts_not_list.json:2: job application_1_1: field 'attempts': expected a "
                  "list, got \"twice\"");
    EXPECT_EQ(error_of(read_philly_joblog(d + "not_list.json")),
              d + "not_list.json:1: expected a JSON list of jobs (Philly cluster_job_log), got a "
                  "object");
    const std::string broken = error_of(read_philly_joblog(d + "broken.json"));
    EXPECT_TRUE(broken.starts_with(d + "broken.json:3: invalid JSON: ")) << broken;
    EXPECT_NE(error_of(read_philly_joblog(d + "missing.json")).find("cannot open"),
              std::string::npos);
}

// ---- Helios cluster_log.csv ----

TEST(Helios, ReadsShanghaiTimesAndSkipsCpuJobs) {
    SkipCounts skips;
    auto w = read_helios(kFixtures + "helios/cluster_log.csv", &skips);
    ASSERT_TRUE(w) << w.error().message;
    // 2020-06-09 18:41:01 Asia/Shanghai = 10:41:01 UTC.
    EXPECT_EQ(w->epoch_unix_s, 1591699261);
    ASSERT_EQ(w->jobs.size(), 4u);
    EXPECT_EQ(w->jobs[0].id, 1425511);
    EXPECT_EQ(w->jobs[1].id, 1425512);
    EXPECT_EQ(w->jobs[2].id, 1425514);
    EXPECT_EQ(w->jobs[3].id, 1425515);
    EXPECT_EQ(job(*w, 1425511).submit_s, 0);
    EXPECT_EQ(job(*w, 1425511).duration_s, 36848);
    EXPECT_EQ(job(*w, 1425512).submit_s, 26);
    EXPECT_EQ(job(*w, 1425512).gpus, 4);
    EXPECT_EQ(job(*w, 1425514).submit_s, 5 * 3600 + 18 * 60 + 58);  // 23:59:59 - 18:41:01
    EXPECT_EQ(job(*w, 1425514).gpus, 8);
    EXPECT_EQ(job(*w, 1425515).submit_s, 12 * 3600 + 48 * 60 + 59);  // next day 07:30:00
    EXPECT_EQ(job(*w, 1425515).duration_s, 1800);                    // "1800.0"
    EXPECT_EQ(job(*w, 1425515).gpus, 16);
    ASSERT_EQ(w->tenants.size(), 2u);  // vcpDC's only job is a CPU job
    EXPECT_EQ(w->tenants[0].name, "vcJkd");
    EXPECT_EQ(w->tenants[1].name, "vchbv");
    EXPECT_EQ(tenant_of(*w, 1425515), "vchbv");
    EXPECT_EQ(skips.summary(), "2 (CPU job (gpu_num = 0): 1, no duration: 1)");
}

TEST(Helios, MalformedRowsNameFileLineAndField) {
    const std::string d = kFixtures + "helios/";
    EXPECT_EQ(error_of(read_helios(d + "bad_gpu.csv")),
              d + "bad_gpu.csv:3: field 'gpu_num': expected an integer >= 0, got '-1'");
    EXPECT_EQ(error_of(read_helios(d + "bad_time.csv")),
              d + "bad_time.csv:2: field 'submit_time': expected a time like 2020-06-09 "
                  "18:41:01, got '2020/06/09 18:41:01'");
    EXPECT_EQ(error_of(read_helios(d + "bad_duration.csv")),
              d + "bad_duration.csv:3: field 'duration': expected seconds from 0 to 10000000000, "
                  "got '-60'");
    // The simulator's bound (model/workload.hpp): named here with the line, not later by job id.
    EXPECT_EQ(error_of(read_helios(d + "huge_duration.csv")),
              d + "huge_duration.csv:2: field 'duration': expected seconds from 0 to 10000000000, "
                  "got '1e300'");
    EXPECT_EQ(error_of(read_helios(d + "dup_id.csv")),
              d + "dup_id.csv:3: field 'job_id': duplicate job id 7");
    EXPECT_EQ(error_of(read_helios(d + "empty_vc.csv")),
              d + "empty_vc.csv:2: field 'vc': empty virtual cluster name");
    EXPECT_EQ(error_of(read_helios(d + "short_row.csv")),
              d + "short_row.csv:2: expected 12 fields, found 11");
}

// ---- RFold Philly arrivals ----

TEST(Rfold, ReadsRoundsAndSorts) {
    SkipCounts skips;
    auto w = read_rfold(kFixtures + "rfold/trace.csv", &skips);  // CRLF, no final newline
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(w->epoch_unix_s, 0);
    EXPECT_TRUE(w->tenants.empty());
    ASSERT_EQ(w->jobs.size(), 4u);
    EXPECT_EQ(w->jobs[0].id, 0);
    EXPECT_EQ(w->jobs[1].id, 2);
    EXPECT_EQ(w->jobs[2].id, 1);
    EXPECT_EQ(w->jobs[3].id, 4);
    EXPECT_EQ(job(*w, 0).duration_s, 3613033);
    EXPECT_EQ(job(*w, 1).duration_s, 4045910);  // 4045909.9999999995
    EXPECT_EQ(job(*w, 1).submit_s, 266563);
    EXPECT_EQ(job(*w, 2).duration_s, 60);  // 60.4
    EXPECT_EQ(job(*w, 2).gpus, 16);        // size, not shape "8+8"
    for (const Job& j : w->jobs) EXPECT_EQ(j.tenant, -1);
    EXPECT_EQ(skips.summary(), "1 (size = 0: 1)");
}

TEST(Rfold, PhillyCalendar) {
    auto w = read_rfold_philly(kFixtures + "rfold/trace.csv");
    ASSERT_TRUE(w) << w.error().message;
    // Arrival 0 = 2017-08-14 23:27:00 PDT = 2017-08-15 06:27:00 UTC.
    EXPECT_EQ(w->epoch_unix_s, 1502778420);
    EXPECT_EQ(job(*w, 0).submit_s, 0);
    EXPECT_EQ(job(*w, 1).submit_s, 266563);  // before the DST change: unchanged
    // Arrival 7518780 = local 2017-11-10 00:00:00, now PST: one hour more elapsed time.
    EXPECT_EQ(job(*w, 4).submit_s, 7518780 + 3600);
}

TEST(Rfold, MalformedRowsNameFileLineAndField) {
    const std::string d = kFixtures + "rfold/";
    EXPECT_EQ(
        error_of(read_rfold(d + "bad_arrival.csv")),
        d + "bad_arrival.csv:3: field 'arrival time (sec)': expected seconds from 0 to "
            "10000000000, got '-5.0'");
    // The simulator's bound (model/workload.hpp): named here with the line, not later by job id.
    EXPECT_EQ(error_of(read_rfold(d + "huge_arrival.csv")),
              d + "huge_arrival.csv:3: field 'arrival time (sec)': expected seconds from 0 to "
                  "10000000000, got '1e11'");
    EXPECT_EQ(error_of(read_rfold(d + "bad_size.csv")),
              d + "bad_size.csv:3: field 'size': expected a GPU count from 0 to 1000000, got 'x'");
    EXPECT_EQ(error_of(read_rfold(d + "dup_id.csv")),
              d + "dup_id.csv:3: field '#job id': duplicate job id 0");
    EXPECT_EQ(error_of(read_rfold(d + "no_size.csv")),
              d + "no_size.csv:1: missing column 'size' in the header");
}

// ---- Native ----

TEST(Native, ReadsEveryFeature) {
    auto w = read_native(kFixtures + "native/good.csv");
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(w->epoch_unix_s, 1505737535);
    ASSERT_EQ(w->tenants.size(), 3u);
    EXPECT_EQ(w->tenants[0].name, "ee9e8c");
    EXPECT_EQ(w->tenants[0].weight, 2690.0);
    EXPECT_EQ(w->tenants[1].name, "team, research");
    EXPECT_EQ(w->tenants[1].weight, 0.5);
    EXPECT_EQ(w->tenants[2].name, "newvc");  // named only by a job row: appended, weight 1
    EXPECT_EQ(w->tenants[2].weight, 1.0);
    EXPECT_EQ(w->share_order, (std::vector<int>{1, 0, 2}));
    ASSERT_EQ(w->jobs.size(), 4u);
    EXPECT_EQ(w->jobs[0].id, 11);  // submit 0
    EXPECT_EQ(w->jobs[1].id, 10);  // submit 30, file order kept on the tie
    EXPECT_EQ(w->jobs[2].id, 12);
    EXPECT_EQ(w->jobs[3].id, 13);
    EXPECT_EQ(job(*w, 11).name, "odd \"name\", quoted");
    EXPECT_EQ(job(*w, 11).weight, 0.25);
    EXPECT_EQ(job(*w, 11).tenant, 1);
    EXPECT_EQ(job(*w, 12).tenant, -1);
    EXPECT_EQ(job(*w, 12).name, "");
    EXPECT_EQ(job(*w, 13).weight, 1e-05);
    EXPECT_EQ(job(*w, 13).duration_s, 0);
    EXPECT_EQ(job(*w, 10).gpus, 8);
    EXPECT_EQ(job(*w, 10).duration_s, 3600);
}

TEST(Native, MalformedFilesNameFileLineAndField) {
    const std::string d = kFixtures + "native/";
    EXPECT_EQ(error_of(read_native(d + "bad_version.csv")),
              d + "bad_version.csv:1: unsupported native trace version '#astraeus-trace,2' (this "
                  "build reads '#astraeus-trace,1')");
    EXPECT_EQ(error_of(read_native(d + "not_native.csv")),
              d + "not_native.csv:1: not an Astraeus native trace (the first line must be "
                  "'#astraeus-trace,1')");
    EXPECT_EQ(error_of(read_native(d + "bad_gpus.csv")),
              d + "bad_gpus.csv:5: field 'gpus': expected an integer from 1 to 1000000, got '0'");
    // The simulator's bounds (model/workload.hpp): named here with the line; they were accepted,
    // then `simulate` failed with "job 2: needs 1 <= gpus <= 1000000 and ..." (no file, no line).
    EXPECT_EQ(error_of(read_native(d + "huge_gpus.csv")),
              d + "huge_gpus.csv:5: field 'gpus': expected an integer from 1 to 1000000, got "
                  "'1000001'");
    EXPECT_EQ(error_of(read_native(d + "huge_submit.csv")),
              d + "huge_submit.csv:6: field 'submit_s': expected an integer up to 10000000000, "
                  "got '10000000001'");
    EXPECT_TRUE(error_of(read_native(d + "unknown_key.csv"))
                    .starts_with(d + "unknown_key.csv:2: unknown header field 'epoch'"));
    EXPECT_EQ(error_of(read_native(d + "bad_epoch_utc.csv")),
              d + "bad_epoch_utc.csv:3: field 'epoch_utc': 2017-09-18 12:25:36 disagrees with "
                  "epoch_unix_s 1505737535 (2017-09-18 12:25:35)");
    EXPECT_EQ(error_of(read_native(d + "bad_share_order.csv")),
              d + "bad_share_order.csv:5: field 'share_order': expected each of the 2 tenant "
                  "indexes 0..1 once");
    EXPECT_EQ(error_of(read_native(d + "dup_id.csv")),
              d + "dup_id.csv:5: field 'job_id': duplicate job id 1");
    EXPECT_EQ(error_of(read_native(d + "bad_weight.csv")),
              d + "bad_weight.csv:4: field 'weight': expected a number > 0, got '-1'");
    EXPECT_TRUE(error_of(read_native(d + "bad_header.csv"))
                    .starts_with(d + "bad_header.csv:3: expected the column header"));
    EXPECT_EQ(error_of(read_native(d + "bad_tenant_weight.csv")),
              d + "bad_tenant_weight.csv:3: field 'tenant': expected a weight from 0 to 1e15, got "
                  "'-1'");
    // Weight 0 is legal (the tenant only borrows; docs/tenants.md): what `trace export` writes
    // for a workspace of weight 0 reads back.
    auto zero = read_native(d + "zero_tenant_weight.csv");
    ASSERT_TRUE(zero) << zero.error().message;
    ASSERT_EQ(zero->tenants.size(), 2u);
    EXPECT_EQ(zero->tenants[1].name, "interns");
    EXPECT_EQ(zero->tenants[1].weight, 0.0);
    EXPECT_EQ(error_of(read_native(d + "short_row.csv")),
              d + "short_row.csv:4: expected 6 fields, found 5");
}

// ---- Registry ----

TEST(ReadTrace, DetectsEachFormat) {
    EXPECT_EQ(detect_trace_format(kFixtures + "philly/joblog.json").value_or("?"), "philly-joblog");
    EXPECT_EQ(detect_trace_format(kFixtures + "helios/cluster_log.csv").value_or("?"), "helios");
    EXPECT_EQ(detect_trace_format(kFixtures + "rfold/trace.csv").value_or("?"), "rfold");
    EXPECT_EQ(detect_trace_format(kFixtures + "native/good.csv").value_or("?"), "native");
    EXPECT_EQ(detect_trace_format(kFixtures + "reference/good.csv").value_or("?"), "reference");
    EXPECT_EQ(detect_trace_format(ASTRAEUS_DATA_DIR "/philly/sampled_jobs.json.gz").value_or("?"),
              "philly-joblog");  // gzip read transparently
    EXPECT_EQ(detect_trace_format(ASTRAEUS_DATA_DIR "/philly/philly_trace.csv.gz").value_or("?"),
              "rfold");
    auto auto_read = read_trace(kFixtures + "helios/cluster_log.csv", "auto");
    ASSERT_TRUE(auto_read);
    EXPECT_EQ(auto_read->jobs.size(), 4u);
}

TEST(ReadTrace, UnknownFormatsAreErrorsListingTheValidOnes) {
    EXPECT_EQ(error_of(read_trace(kFixtures + "helios/cluster_log.csv", "slurm")),
              "unknown trace format 'slurm' (valid: reference, philly-joblog, helios, rfold, "
              "rfold-philly, native, auto)");
    const std::string e = error_of(read_trace(kFixtures + "reference/share.csv", "auto"));
    EXPECT_TRUE(e.starts_with(kFixtures + "reference/share.csv:1: cannot detect the trace format "
                                          "from the first line 'name,share'"))
        << e;
    EXPECT_NE(e.find("(one of reference, philly-joblog"), std::string::npos);
    EXPECT_TRUE(e.ends_with("rfold-philly, native)")) << e;  // not "auto": it just failed
}

TEST(ReadTrace, ATruncatedGzipNamesTheFileOnce) {
    // zlib's own message names the file ("F: unexpected end of file"); it was printed after
    // ours ("F: read error ...: F: unexpected end of file").
    const std::string whole = ASTRAEUS_DATA_DIR "/philly/sampled_jobs.json.gz";
    const std::string cut = ::testing::TempDir() + "astraeus-truncated.json.gz";
    {
        std::ifstream in(whole, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        ASSERT_GT(bytes.size(), 4096u);
        std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    }
    const std::string e = error_of(read_trace(cut, "philly-joblog"));
    std::filesystem::remove(cut);
    EXPECT_EQ(e, cut + ": read error (corrupt or truncated gzip?): unexpected end of file");
}

TEST(ReadTrace, ADirectoryIsNamedAsOneNotAsCorruptGzip) {
    // It said "<dir>: read error (corrupt gzip?)" (gzopen opens a directory, then reads fail).
    const std::string dir = kFixtures + "helios";
    EXPECT_EQ(error_of(read_trace(dir, "auto")), dir + ": is a directory, not a file");
    EXPECT_EQ(error_of(read_trace(dir, "reference")), dir + ": is a directory, not a file");
}

}  // namespace
}  // namespace astraeus
