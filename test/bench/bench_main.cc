// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mscclpp/gpu_capabilities.hpp>
#include <set>

#include "bench/bench.hpp"
#include "common/strings.hpp"

namespace mscclpp::bench {

std::vector<Section>& sections() {
  static std::vector<Section> all;
  return all;
}

std::shared_ptr<TcpBootstrap> BenchContext::bootstrap() {
  if (!bootstrap_) {
    UniqueId id;
    if (rank == 0) id = TcpBootstrap::createUniqueId();
    MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
    bootstrap_ = std::make_shared<TcpBootstrap>(rank, nRanks);
    bootstrap_->initialize(id, 60);
  }
  return bootstrap_;
}

void Table::print() const {
  std::vector<size_t> widths(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) widths[c] = columns[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  std::printf("\n# %s\n#", title.c_str());
  for (size_t c = 0; c < columns.size(); ++c) std::printf(" %*s", static_cast<int>(widths[c]), columns[c].c_str());
  std::printf("\n");
  for (const auto& row : rows) {
    std::printf(" ");
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c)
      std::printf(" %*s", static_cast<int>(widths[c]), row[c].c_str());
    std::printf("\n");
  }
  for (const auto& note : notes) std::printf("# %s\n", note.c_str());
  std::fflush(stdout);
}

std::string fmt(double value, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", precision, value);
  return buf;
}

std::string fmtSize(size_t bytes) { return formatBytes(bytes); }

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  auto mid = samples.begin() + samples.size() / 2;
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

double nowSec() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace mscclpp::bench

namespace {

void usage() {
  std::printf(
      "usage: mscclpp-bench [--quick] [--list] [--sections a,b,...]\n"
      "Start it as N ranks (mpirun -np N mscclpp-bench); tools/run.sh does that.\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mscclpp::bench;
  MPI_Init(&argc, &argv);
  BenchContext ctx;
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx.nRanks);
  std::set<std::string> only;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      ctx.quick = true;
    } else if (!std::strcmp(argv[i], "--list")) {
      list = true;
    } else if (!std::strcmp(argv[i], "--sections") && i + 1 < argc) {
      for (const auto& s : mscclpp::splitList(argv[++i])) only.insert(s);
    } else {
      if (ctx.rank == 0) usage();
      MPI_Finalize();
      return 2;
    }
  }
  const bool root = ctx.rank == 0;
  if (root) {
    std::printf("# mscclpp-bench, libmscclpp %s, %d rank(s) on this host\n", mscclpp::version().c_str(), ctx.nRanks);
    std::printf("# GPU: %s\n", mscclpp::gpuCapabilities().toString().c_str());
  }
  int failures = 0;
  std::vector<std::string> skipped;
  for (Section& section : sections()) {
    if (!only.empty() && !only.count(section.name)) continue;
    if (list) {
      if (root) std::printf("%-24s %s\n", section.name.c_str(), section.description.c_str());
      continue;
    }
    std::string reason = section.skipReason ? section.skipReason(ctx) : "";
    if (!reason.empty()) {
      skipped.push_back(section.name + ": " + reason);
      continue;
    }
    try {
      std::vector<Table> tables = section.run(ctx);
      if (root)
        for (const Table& t : tables) t.print();
    } catch (const std::exception& e) {
      ++failures;
      std::fprintf(stderr, "[rank %d] section %s failed: %s\n", ctx.rank, section.name.c_str(), e.what());
    }
    ctx.mpiBarrier();
  }
  if (root && !skipped.empty()) {
    std::printf("\n# Skipped here:\n");
    for (const auto& s : skipped) std::printf("#   %s\n", s.c_str());
  }
  std::fflush(stdout);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
