#include <gtest/gtest.h>

#include "astraeus/placement/consolidate.hpp"

namespace astraeus {
TEST(Consolidate, Placeholder) { EXPECT_TRUE(true); }
}
