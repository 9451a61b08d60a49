// Calendar and time-zone conversion. Expected instants computed independently with Python's
// zoneinfo (datetime(..., tzinfo=ZoneInfo("America/Los_Angeles")).timestamp(), fold=0).
#include "astraeus/trace/civil_time.hpp"

#include <gtest/gtest.h>

namespace astraeus {
namespace {

std::int64_t pacific(const char* s) {
    return local_to_utc(*parse_civil(s), TimeZone::UsPacific);
}

TEST(CivilTime, ParsesTheTraceForms) {
    EXPECT_EQ(parse_civil("1970-01-01 00:00:00"), 0);
    EXPECT_EQ(parse_civil("2017-10-03"), 1506988800);  // midnight
    EXPECT_EQ(parse_civil("2017-10-03 14:24:30"), 1506988800 + 14 * 3600 + 24 * 60 + 30);
    EXPECT_EQ(parse_civil("2017-10-03T14:24:30"), parse_civil("2017-10-03 14:24:30"));
    EXPECT_EQ(parse_civil("2017-10-03T14:24:30Z"), parse_civil("2017-10-03 14:24:30"));
    EXPECT_EQ(parse_civil("1969-12-31 23:59:59"), -1);
    EXPECT_EQ(parse_civil("2016-02-29"), 1456704000);
}

TEST(CivilTime, RejectsMalformedAndOutOfRange) {
    for (const char* bad :
         {"", "2017-13-01", "2017-02-29", "2017-10-03 24:00:00", "2017-10-03 1:00:00", "2017/10/03",
          "2017-10-03 14:24", "2017-10-03 14:24:30 PDT", "2017-10-03 14:24:30Z", "None"})
        EXPECT_FALSE(parse_civil(bad).has_value()) << bad;
}

TEST(CivilTime, UsPacificMatchesZoneinfo) {
    EXPECT_EQ(pacific("2017-10-03 14:24:30"), 1507065870);  // PDT, UTC-7
    EXPECT_EQ(pacific("2017-11-05 00:59:00"), 1509868740);  // PDT
    EXPECT_EQ(pacific("2017-11-05 01:30:00"), 1509870600);  // repeated hour: first (PDT)
    EXPECT_EQ(pacific("2017-11-05 02:00:00"), 1509876000);  // PST, UTC-8
    EXPECT_EQ(pacific("2017-03-12 02:30:00"), 1489314600);  // skipped hour: read as PST
    EXPECT_EQ(pacific("2017-03-12 03:00:00"), 1489312800);  // PDT
    EXPECT_EQ(pacific("2005-04-03 03:00:00"), 1112522400);  // 1987-2006 rules: April start
    EXPECT_EQ(pacific("2005-10-30 01:30:00"), 1130661000);  // ... last Sunday of October
}

TEST(CivilTime, ShanghaiIsUtcPlusEight) {
    EXPECT_EQ(local_to_utc(*parse_civil("2020-06-09 18:41:01"), TimeZone::AsiaShanghai),
              1591699261);
}

TEST(CivilTime, FormatsUtc) {
    EXPECT_EQ(format_utc(1507065870), "2017-10-03 21:24:30");
    EXPECT_EQ(format_utc(-1), "1969-12-31 23:59:59");
    EXPECT_EQ(format_utc_date(1506902400), "2017-10-02");
    EXPECT_EQ(floor_div(-1, kDay), -1);
    EXPECT_EQ(floor_div(86400, kDay), 1);
}

}  // namespace
}  // namespace astraeus
