// Goodput categories and the figures derived from a set of counts (spec/goodput.md, "The count"
// and "Derived figures"; the user page seeds/goodput-page.txt, "The categories").
// GPU-seconds are exact integers; GPU-hours appear only at the edges (tables, JSON).
// Thread safety: plain values.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "astraeus/base/error.hpp"
#include "astraeus/base/time.hpp"

namespace astraeus::goodput {

/// Where a worker's GPU time went, in the page's column order (USED, IDLE, STALLED, START,
/// RESTART, FAILURE, PREEMPT, WAITING).
enum class Category : std::uint8_t {
    Productive,  ///< running with busy GPUs, or winding down on its owner's request
    Idle,        ///< running with idle GPUs (mean utilization under the busy threshold)
    Stalled,     ///< stalled, stopping after a stall, or waiting again after one
    Starting,    ///< placed, not yet running, first attempt
    Restart,     ///< placed, not yet running, later attempt
    Failure,     ///< failed/lost holding GPUs, or waiting again after that
    Preemption,  ///< stopping for a preemption / lease end / drain, or waiting again after it
    Waiting,     ///< waiting for its first placement (never held)
};
inline constexpr int kCategories = 8;
inline constexpr std::array<Category, kCategories> kAllCategories{
    Category::Productive, Category::Idle,    Category::Stalled,    Category::Starting,
    Category::Restart,    Category::Failure, Category::Preemption, Category::Waiting};

/// The REST key of a category: "productive", "idle", "stalled", "starting", "restart",
/// "failure", "preemption", "waiting".
std::string_view to_string(Category c);
/// The inverse of to_string; an error naming the valid keys otherwise.
Result<Category> parse_category(std::string_view key);

/// GPU-seconds per category, the held part and the not-held part (asked for, not placed), and
/// beside them the unmeasured part of idle (running time no utilization sample or progress
/// decided; spec/goodput.md "Busy or idle"), added under the pseudo-category kCategories.
struct Counts {
    std::array<GpuSeconds, kCategories> held{};
    std::array<GpuSeconds, kCategories> not_held{};
    GpuSeconds unmeasured = 0;  ///< included in held idle too

    void add(Category c, bool is_held, GpuSeconds gpu_s) {
        const int i = static_cast<int>(c);
        if (i >= kCategories) unmeasured += gpu_s;
        else (is_held ? held : not_held)[i] += gpu_s;
    }
    Counts& operator+=(const Counts& o);
    bool operator==(const Counts&) const = default;
    GpuSeconds held_of(Category c) const { return held[static_cast<int>(c)]; }
    GpuSeconds not_held_of(Category c) const { return not_held[static_cast<int>(c)]; }
    /// held + not held of one category (the REST `gpu_hours` value, in GPU-seconds).
    GpuSeconds total_of(Category c) const { return held_of(c) + not_held_of(c); }
};

/// The derived figures of spec/goodput.md, all in GPU-seconds:
/// allocated = sum of held parts; productive = held productive; waiting = sum of not-held parts;
/// lost = allocated + waiting - productive; goodput = productive / allocated, absent when
/// allocated = 0.
struct Figures {
    GpuSeconds allocated = 0;
    GpuSeconds productive = 0;
    GpuSeconds waiting = 0;
    GpuSeconds lost = 0;
    std::optional<double> goodput;
};
Figures figures(const Counts& c);

/// GPU-seconds to GPU-hours (for display only).
inline double gpu_hours(GpuSeconds s) { return static_cast<double>(s) / 3600.0; }

}  // namespace astraeus::goodput
