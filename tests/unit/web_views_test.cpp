// The parts behind the web pages: the embedded assets (every file under src/astraeus/web/assets
// is in the binary byte for byte, at its URL path, with its Content-Type; the page loads nothing
// from another host and has no inline script), and the figures the fairness and run pages read
// (the LTGF window's closed buckets, each pool's tenant views, a worker's last step), with
// values worked out by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/accounting/tenant_ledger.hpp"
#include "astraeus/goodput/stragglers.hpp"
#include "astraeus/policies/registry.hpp"
#include "astraeus/service/round_adapter.hpp"
#include "astraeus/web/assets.hpp"

using namespace astraeus;
namespace fs = std::filesystem;

namespace {

// Each text between an occurrence of `open` and the next `close` after it (no std::regex: GCC 12
// warns falsely on it under the sanitizers).
std::vector<std::string> between(const std::string& text, std::string_view open, char close) {
    std::vector<std::string> out;
    for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at + 1)) {
        const std::size_t from = at + open.size();
        const std::size_t to = text.find(close, from);
        if (to == std::string::npos) break;
        out.push_back(text.substr(from, to - from));
    }
    return out;
}

bool is_etag(std::string_view e) {  // "16 lower-case hex digits", quoted
    if (e.size() != 18 || e.front() != '"' || e.back() != '"') return false;
    return e.substr(1, 16).find_first_not_of("0123456789abcdef") == std::string_view::npos;
}
std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
}  // namespace

TEST(WebAssets, EveryFileIsEmbeddedByteForByte) {
    const fs::path dir = ASTRAEUS_WEB_ASSETS_DIR;
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        const std::string rel = fs::relative(e.path(), dir).generic_string();
        // Editors' hidden and backup files are not assets (cmake/embed_web_assets.cmake).
        if (rel.starts_with('.') || rel.find("/.") != std::string::npos || rel.ends_with('~')) continue;
        ++files;
        const std::string url = rel == "index.html" ? "/" : "/assets/" + rel;
        const web::Asset* a = web::find_asset(url);
        ASSERT_NE(a, nullptr) << url;
        EXPECT_EQ(a->body, slurp(e.path())) << url;
        EXPECT_TRUE(is_etag(a->etag)) << a->etag;
        const std::string ext = e.path().extension().string();
        const std::string want = ext == ".html" ? "text/html; charset=utf-8"
                                 : ext == ".js" ? "text/javascript; charset=utf-8"
                                 : ext == ".css" ? "text/css; charset=utf-8"
                                                 : "image/svg+xml";
        EXPECT_EQ(a->content_type, want) << url;
    }
    EXPECT_EQ(web::all_assets().size(), files);
    EXPECT_GE(files, 3u);
    EXPECT_EQ(web::find_asset("/index.html"), nullptr) << "index.html is served at / only";
    EXPECT_EQ(web::find_asset("/assets/nope.js"), nullptr);
}

TEST(WebAssets, PageLoadsOnlyItsOwnFilesAndNoInlineScript) {
    const web::Asset* index = web::find_asset("/");
    ASSERT_NE(index, nullptr);
    const std::string html(index->body);
    // Every src= and href= is an embedded asset, a fragment or data: (the empty icon).
    std::vector<std::string> targets = between(html, "src=\"", '"');
    for (auto& t : between(html, "href=\"", '"')) targets.push_back(t);
    int refs = 0;
    for (const std::string& target : targets) {
        ++refs;
        if (target.starts_with("#") || target == "data:,") continue;
        EXPECT_NE(web::find_asset(target), nullptr) << "not embedded: " << target;
    }
    EXPECT_GE(refs, 3);
    // Every <script> has a src (no inline script: the CSP forbids it anyway).
    for (const std::string& attrs : between(html, "<script", '>'))
        EXPECT_NE(attrs.find("src="), std::string::npos) << "<script" << attrs << ">";
    // JavaScript imports are relative (./x.js) and embedded; no module is fetched from elsewhere.
    for (const web::Asset& a : web::all_assets()) {
        if (!a.path.ends_with(".js")) continue;
        const std::string js(a.body);
        EXPECT_EQ(js.find("innerHTML"), std::string::npos) << a.path << " uses innerHTML";
        std::vector<std::string> imported = between(js, "from '", '\'');
        for (std::string& m : between(js, "import('", '\'')) imported.push_back(std::move(m));  // loaded later
        for (const std::string& m : imported) {
            ASSERT_TRUE(m.starts_with("./")) << a.path << " imports " << m;
            EXPECT_NE(web::find_asset("/assets/" + m.substr(2)), nullptr) << m;
        }
    }
    EXPECT_NE(web::kContentSecurityPolicy.find("script-src 'self';"), std::string_view::npos);
    EXPECT_EQ(web::kContentSecurityPolicy.find("unsafe"), std::string_view::npos);
}

TEST(TenantLedger, ClosedBucketsOldestFirstWithinTheWindow) {
    TenantLedger l(3);
    EXPECT_TRUE(l.closed_buckets().empty());
    // Bucket k: quota 1, demand 2, used k+1 GPUs for 10 s.
    for (int k = 0; k < 5; ++k) {
        l.accrue(1, 2, k + 1, 10);
        l.close_bucket();
        const auto b = l.closed_buckets();
        ASSERT_EQ(b.size(), static_cast<std::size_t>(std::min(k + 1, 3)));
        EXPECT_EQ(b.back().utilized, (k + 1) * 10);  // the newest last
    }
    const auto b = l.closed_buckets();  // buckets 2, 3, 4 (used 3, 4, 5 GPUs)
    EXPECT_EQ(b[0].utilized, 30);
    EXPECT_EQ(b[1].utilized, 40);
    EXPECT_EQ(b[2].utilized, 50);
    EXPECT_EQ(b[0].deserved, 10);  // min(demand 2, quota 1) x 10 s
    EXPECT_EQ(b[0].entitled, 10);
    EXPECT_EQ(b[0].demand, 20);
    EXPECT_EQ(l.window().utilized, 30 + 40 + 50);
}

TEST(StragglerDetector, LastStep) {
    goodput::StragglerDetector d;
    d.set_gang(0, 2);
    EXPECT_EQ(d.last_step(0, 0), -1);
    EXPECT_EQ(d.last_step(7, 0), -1) << "unknown run";
    d.progress(0, 0, 10, 5);
    d.progress(0, 0, 20, 9);
    EXPECT_EQ(d.last_step(0, 0), 9);
    EXPECT_EQ(d.last_step(0, 1), -1);
    d.reset(0, 0);
    EXPECT_EQ(d.last_step(0, 0), -1);
}

TEST(RoundAdapter, TenantViewsReceivedAgainstDeserved) {
    AstraeaOptions base;
    base.lease_s = 100000;  // no lease end during the test
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(2, 8), *opt, "consolidate");
    ASSERT_TRUE(ad) << ad.error().message;
    service::RoundAdapter& a = **ad;
    // Weights 1 and 3 on 16 GPUs: shares 4 and 12.
    a.set_tenants({{"ml", 1.0}, {"cv", 3.0}});
    a.advance(0);
    const int ml = a.tenant_index("ml"), cv = a.tenant_index("cv");
    (void)*a.submit(ml, 8, 0, 0);
    ASSERT_EQ(a.round(0).size(), 1u);  // ml borrows: 8 of the 16 GPUs
    (void)*a.submit(cv, 12, 0, 0);     // 8 free < 12: waits
    EXPECT_TRUE(a.round(0).empty());
    a.advance(5400);  // one closed hour and half of the next
    const auto views = a.tenant_views();
    ASSERT_EQ(views.size(), 2u);
    const service::TenantView& m = views[static_cast<std::size_t>(ml)];
    const service::TenantView& c = views[static_cast<std::size_t>(cv)];
    EXPECT_EQ(m.name, "ml");
    EXPECT_EQ(m.quota_gpus, 4);
    EXPECT_EQ(c.quota_gpus, 12);
    EXPECT_EQ(m.used_gpus, 8);
    EXPECT_EQ(c.used_gpus, 0);
    EXPECT_EQ(c.demand_gpus, 12);
    // The closed hour: ml used 8 GPUs (28,800 GPU-s), deserved min(8, 4) = 4 (14,400); cv
    // received nothing and deserved min(12, 12) = 12 GPUs (43,200).
    ASSERT_EQ(m.buckets.size(), 1u);
    EXPECT_EQ(m.buckets[0].utilized, 8 * 3600);
    EXPECT_EQ(m.buckets[0].deserved, 4 * 3600);
    EXPECT_EQ(c.buckets[0].utilized, 0);
    EXPECT_EQ(c.buckets[0].deserved, 12 * 3600);
    // The half hour being filled, and the window through now (5,400 s).
    EXPECT_EQ(m.current.utilized, 8 * 1800);
    EXPECT_EQ(m.window.utilized, 8 * 5400);
    EXPECT_EQ(m.window.deserved, 4 * 5400);
    EXPECT_EQ(c.window.deserved, 12 * 5400);
    EXPECT_EQ(a.clock_s(), 5400);
}

TEST(RoundAdapter, WindDownGpusAreReceivedAsTheyAreDeserved) {
    // One tenant alone on 8 GPUs runs a 2-GPU job from 0 to 60 s, is stopped at 60 s (its
    // workers' 30 s grace: wind_down) and leaves at 90 s. It never waited: received = deserved
    // = 2 GPUs x 90 s = 180 GPU-s, F_u = 1. (Before: the grace counted as deserved, 180, but
    // not received, 120: F_u 0.67 for a tenant that never waited.)
    AstraeaOptions base;
    base.lease_s = 100000;
    auto opt = policy_options("astraea", base);
    ASSERT_TRUE(opt);
    auto ad = service::RoundAdapter::make(ClusterSpec::uniform(1, 8), *opt, "consolidate");
    ASSERT_TRUE(ad) << ad.error().message;
    service::RoundAdapter& a = **ad;
    a.set_tenants({{"ml", 1.0}});
    a.advance(0);
    const int ml = a.tenant_index("ml");
    const int j = *a.submit(ml, 2, 0, 0);
    ASSERT_EQ(a.round(0).size(), 1u);
    a.wind_down(j, 60);
    a.advance(75);
    EXPECT_EQ(a.tenant_views()[0].current.utilized, 2 * 75) << "the grace is received";
    a.remove(j, 90);
    a.advance(200);
    EXPECT_EQ(a.tenant_views()[0].current.utilized, 2 * 90);
    EXPECT_EQ(a.tenant_views()[0].current.deserved, 2 * 90);
    // A job after it: nothing more is counted for the first one.
    (void)*a.submit(ml, 4, 200, 0);
    ASSERT_EQ(a.round(200).size(), 1u);
    a.advance(210);
    EXPECT_EQ(a.tenant_views()[0].current.utilized, 2 * 90 + 4 * 10);
}
