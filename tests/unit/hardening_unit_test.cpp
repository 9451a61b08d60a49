// Hardening helpers (issue 14), values by hand: the Allow header of a path, UTF-8 checks,
// error messages with long echoes cut, text escaped for a terminal, duplicate pool names.
#include <gtest/gtest.h>

#include "astraeus/api/http_conformance.hpp"
#include "astraeus/client/terminal_text.hpp"
#include "astraeus/service/config.hpp"
#include "astraeus/service/service.hpp"

namespace astraeus {
namespace {

TEST(HttpConformance, AllowListsTheMethodsOfAPath) {
    api::RouteTable t;
    t.add("POST", "/v1/runs");
    t.add("GET", "/v1/runs");
    t.add("GET", R"(/v1/runs/([^/]+))");
    t.add("POST", R"(/v1/runs/([^/]+)/stop)");
    EXPECT_EQ(t.allowed("/v1/runs"), "GET, HEAD, POST");
    EXPECT_EQ(t.allowed("/v1/runs/llm"), "GET, HEAD");
    EXPECT_EQ(t.allowed("/v1/runs/llm/stop"), "POST");
    EXPECT_EQ(t.allowed("/v1/runs//stop"), "");  // an empty segment is no run name
    EXPECT_EQ(t.allowed("/v1/nope"), "");
    EXPECT_EQ(t.allowed("/v1/runs/a/b/c"), "");
    EXPECT_TRUE(t.allows("/v1/runs/x", "HEAD"));
    EXPECT_TRUE(t.allows("/v1/runs", "POST"));
    EXPECT_FALSE(t.allows("/v1/runs/x", "POST"));
    EXPECT_FALSE(t.allows("/v1/runs", "PO"));
}

TEST(HttpConformance, Utf8) {
    EXPECT_TRUE(api::valid_utf8("plain"));
    EXPECT_TRUE(api::valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
    EXPECT_FALSE(api::valid_utf8("\xff"));
    EXPECT_FALSE(api::valid_utf8("\xc0\xaf"));          // overlong '/'
    EXPECT_FALSE(api::valid_utf8("\xed\xa0\x80"));      // a surrogate
    EXPECT_FALSE(api::valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
    EXPECT_FALSE(api::valid_utf8("\xe2\x82"));          // cut short
}

TEST(HttpConformance, LongEchoesAreCutTo200Bytes) {
    const std::string name(100000, 'x');
    const std::string m = api::bounded_message("bad run name '" + name + "': 1-63 of A-Z");
    EXPECT_EQ(m, "bad run name '" + std::string(200, 'x') + "...': 1-63 of A-Z");
    // Short echoes are kept; invalid bytes become '?'.
    EXPECT_EQ(api::bounded_message("no run named 'a\xff'"), "no run named 'a?'");
    // A multi-byte character is not split: 199 x 'x' then 'é' (2 bytes) does not fit in 200.
    const std::string m2 = api::bounded_message("'" + std::string(199, 'x') + "\xc3\xa9zz'");
    EXPECT_EQ(m2, "'" + std::string(199, 'x') + "...'");
    // Unquoted text is cut at 4 x 200 bytes.
    EXPECT_EQ(api::bounded_message(std::string(5000, 'y')).size(), 803U);
}

TEST(TerminalText, ControlCharactersAreEscaped) {
    EXPECT_EQ(client::terminal_safe("python train.py --lr 0.1"), "python train.py --lr 0.1");
    EXPECT_EQ(client::terminal_safe("a\x1b[31mred\x1b]0;t\x07"), "a\\e[31mred\\e]0;t\\x07");
    EXPECT_EQ(client::terminal_safe("x\ny\tz\r\x7f"), "x\\ny\\tz\\r\\x7f");
    EXPECT_EQ(client::terminal_safe("\xc2\x9b" "2J"), "\\x9b2J");             // C1 CSI
    EXPECT_EQ(client::terminal_safe("caf\xc3\xa9"), "caf\xc3\xa9");           // é kept
    EXPECT_EQ(client::terminal_safe("\xff\xfe"), "\\xff\\xfe");               // not UTF-8
}

TEST(ServiceConfig, PoolNamesArePrintableUtf8) {
    using astraeus::service::valid_pool_name;
    EXPECT_TRUE(valid_pool_name("a100"));
    EXPECT_TRUE(valid_pool_name("<img src=x onerror=alert(1)>"));  // shown escaped everywhere
    EXPECT_TRUE(valid_pool_name("h100 east"));
    EXPECT_TRUE(valid_pool_name("gr\xc3\xbcn"));                        // U+00FC
    EXPECT_TRUE(valid_pool_name(std::string(63, 'p')));
    EXPECT_FALSE(valid_pool_name(std::string(64, 'p')));
    EXPECT_FALSE(valid_pool_name(""));
    EXPECT_FALSE(valid_pool_name(" a"));
    EXPECT_FALSE(valid_pool_name("a "));
    EXPECT_FALSE(valid_pool_name("p\x1b[2J"));      // ESC (C0)
    EXPECT_FALSE(valid_pool_name("p\x7f"));         // DEL
    EXPECT_FALSE(valid_pool_name("p\xc2\x9b"));     // U+009B (C1 CSI)
    EXPECT_FALSE(valid_pool_name("p\xff"));         // not UTF-8
    EXPECT_FALSE(valid_pool_name("p\xc0\xaf"));     // overlong '/'
    EXPECT_FALSE(valid_pool_name("p\xed\xa0\x80")); // a surrogate
    EXPECT_FALSE(valid_pool_name("p\xe2\x82"));     // truncated
}

TEST(ServiceConfig, DuplicatePoolNamesAreAnError) {
    auto c = service::parse_config(
        R"({"pools": [{"name": "a", "machines": [{"count": 1, "gpus": 8}]},
                      {"name": "b", "machines": [{"count": 1, "gpus": 8}]},
                      {"name": "a", "machines": [{"count": 2, "gpus": 8}]}]})",
        "c.json");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message,
              "c.json: pools[2]: duplicate pool name 'a' (also pools[0]): each pool needs its own name");
    auto ok = service::parse_config(R"({"pools": [{"name": "a", "machines": [{"count": 1, "gpus": 8}]}]})", "c.json");
    ASSERT_TRUE(ok);
    EXPECT_TRUE(ok->pools_given);
    EXPECT_FALSE(service::parse_config("{}", "c.json")->pools_given);
}

}  // namespace
}  // namespace astraeus
