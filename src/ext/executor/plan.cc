// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// ExecutionPlan: a plan file read (plan_file.cc) and parsed (plan_parser.cc) for one rank.

#include "ext/executor/plan.hpp"

namespace mscclpp {

ExecutionPlan::Impl::Impl(const std::string& planPath, int planRank) : path(planPath), rank(planRank) {
  parse(readFile(planPath, planRank));
}

ExecutionPlan::ExecutionPlan(const std::string& planPath, int rank) : impl_(std::make_shared<Impl>(planPath, rank)) {}

std::string ExecutionPlan::name() const { return impl_->name; }
std::string ExecutionPlan::collective() const { return impl_->collective; }
size_t ExecutionPlan::minMessageSize() const { return impl_->minMessageSize; }
size_t ExecutionPlan::maxMessageSize() const { return impl_->maxMessageSize; }
bool ExecutionPlan::isInPlace() const { return impl_->isInPlace; }

}  // namespace mscclpp
