// `astraeus agent --api`: the accepted forms (bare origin, /v1 as ASTRALYX_API, trailing slash)
// give the server's origin; every other form is an error naming the value.
#include <gtest/gtest.h>

#include "astraeus/client/agent_api_url.hpp"

using astraeus::client::parse_agent_api_url;

TEST(AgentApiUrl, OriginWithOrWithoutV1IsTheSameServer) {
    for (const char* url : {"http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1",
                            "http://127.0.0.1:8080/v1/"}) {
        auto o = parse_agent_api_url(url);
        ASSERT_TRUE(o) << url << ": " << o.error().message;
        EXPECT_EQ(*o, "http://127.0.0.1:8080") << url;
    }
    EXPECT_EQ(parse_agent_api_url("https://scheduler.example/v1").value(), "https://scheduler.example");
    EXPECT_EQ(parse_agent_api_url("https://[::1]:8443/v1/").value(), "https://[::1]:8443");
    EXPECT_EQ(parse_agent_api_url("http://sched:65535").value(), "http://sched:65535");
}

TEST(AgentApiUrl, OtherFormsAreErrorsNamingTheValue) {
    for (const char* url : {"127.0.0.1:8080", "ftp://h:21", "http://", "http://:8080", "http://h:0",
                            "http://h:65536", "http://h:80x", "http://h:", "http://h:8080/api",
                            "http://h:8080/v1/agent", "http://h:8080/v2", "http://u@h:8080",
                            "http://h:8080?x=1", "http://[::1", "http://[::1]x:80", ""}) {
        auto o = parse_agent_api_url(url);
        ASSERT_FALSE(o) << url << " accepted as " << *o;
        EXPECT_NE(o.error().message.find("--api '" + std::string(url) + "'"), std::string::npos)
            << o.error().message;
        EXPECT_NE(o.error().message.find("http[s]://HOST[:PORT]/v1"), std::string::npos) << o.error().message;
    }
}
