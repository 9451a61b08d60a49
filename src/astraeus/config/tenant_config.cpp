#include "astraeus/config/tenant_config.hpp"

#include <nlohmann/json.hpp>

#include <set>

#include "astraeus/trace/csv.hpp"
#include "astraeus/trace/reference_csv.hpp"

namespace astraeus {
namespace {

Result<TenantTable> read_json(const std::string& path) {
    auto text = read_text_file(path);
    if (!text) return std::unexpected(text.error());
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 4e510
        return fail(path + ": not valid JSON: " + e.what());  // names the byte offset
    }
    if (!doc.is_object() || !doc.contains("tenants") || !doc["tenants"].is_array())
        return fail(path + ": expected an object with a \"tenants\" array");
    // A key the format does not know is an error: a typo ("wieght") must not pass silently.
    for (const auto& [k, v] : doc.items())
        if (k != "tenants") return fail(path + ": unknown key '" + k + "' (expected \"tenants\")");
    TenantTable t;
    std::set<std::string> seen;
    std::string first_key;
    for (std::size_t i = 0; i < doc["tenants"].size(); ++i) {
        const auto& e = doc["tenants"][i];
        const std::string where = path + ": tenants[" + std::to_string(i) + "]";
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
            return fail(where + ": expected {\"name\": ..., \"weight\": ...}");
        const std::string name = e["name"].get<std::string>();
        if (name.empty()) return fail(where + ": empty name");
        if (!seen.insert(name).second) return fail(where + ": tenant '" + name + "' listed twice");
        for (const auto& [k, v] : e.items())
            if (k != "name" && k != "weight" && k != "quota_gpus")
                return fail(where + " ('" + name + "'): unknown key '" + k +
                            "' (expected name, weight or quota_gpus)");
        if (e.contains("weight") && e.contains("quota_gpus"))
            return fail(where + " ('" + name + "'): give \"weight\" or \"quota_gpus\", not both");
        // Neither key: say so (it was reported as mixing the two keys when an earlier tenant had
        // a "weight").
        if (!e.contains("weight") && !e.contains("quota_gpus"))
            return fail(where + " ('" + name + "'): no \"weight\" (or \"quota_gpus\"): expected "
                        "a number from 0 to 1e15");
        const char* key = e.contains("weight") ? "weight" : "quota_gpus";
        if (first_key.empty()) first_key = key;
        if (first_key != key)
            return fail(where + " ('" + name + "'): use \"weight\" for every tenant or "
                        "\"quota_gpus\" for every tenant, not both");
        if (!e.contains(key) || !e[key].is_number() || !(e[key].get<double>() >= 0) ||
            !(e[key].get<double>() <= kMaxWeight))
            return fail(where + " ('" + name + "'): expected a number from 0 to 1e15 in "
                        "\"weight\" or \"quota_gpus\"");
        t.share_order.push_back(static_cast<int>(t.tenants.size()));
        t.tenants.push_back({name, e[key].get<double>()});
    }
    if (t.tenants.empty()) return fail(path + ": no tenants");
    return t;
}

}  // namespace

Result<TenantTable> read_tenant_config(const std::string& path, const std::string& names_path) {
    if (path.ends_with(".json")) {
        if (!names_path.empty()) return fail("--names applies to CSV tenant files only");
        return read_json(path);
    }
    return read_reference_tenants(path, names_path);
}

}  // namespace astraeus
