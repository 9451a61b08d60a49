// Kept for existing includes: the policy table moved to policies/registry.hpp (it names the
// policies of policies/, which depend on sched/, not the other way round).
#pragma once
#include "astraeus/policies/registry.hpp"
