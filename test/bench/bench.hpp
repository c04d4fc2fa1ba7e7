// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The benchmark program's parts. A section measures one thing and prints it next to a reference
// measured in the same run; it never passes or fails on time. Sections register themselves with
// MSCCLPP_BENCH_SECTION and say why they cannot run here instead of running.

#ifndef MSCCLPP_TEST_BENCH_BENCH_HPP_
#define MSCCLPP_TEST_BENCH_BENCH_HPP_

#include <mpi.h>

#include <functional>
#include <memory>
#include <mscclpp/core.hpp>
#include <string>
#include <vector>

namespace mscclpp::bench {

/// A table printed by rank 0: a title, column names and rows of already formatted cells.
struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  void print() const;
};

struct BenchContext {
  int rank = 0;
  int nRanks = 1;
  /// --quick: fewer sizes and iterations (for CI smoke runs).
  bool quick = false;
  /// A bootstrap of all ranks, made on first use.
  std::shared_ptr<TcpBootstrap> bootstrap();
  /// MPI barrier: synchronizes ranks for timing without using the library under test.
  void mpiBarrier() const { MPI_Barrier(MPI_COMM_WORLD); }

 private:
  std::shared_ptr<TcpBootstrap> bootstrap_;
};

struct Section {
  std::string name;
  std::string description;
  /// Empty if the section can run here, else the reason it is skipped (same answer on every rank).
  std::function<std::string(BenchContext&)> skipReason;
  /// Measures and returns the tables to print (only rank 0's are printed).
  std::function<std::vector<Table>(BenchContext&)> run;
};

std::vector<Section>& sections();

struct SectionRegistrar {
  explicit SectionRegistrar(Section section) { sections().push_back(std::move(section)); }
};

#define MSCCLPP_BENCH_SECTION(id, ...) static ::mscclpp::bench::SectionRegistrar id##Registrar_(__VA_ARGS__)

/// Formatting helpers shared by sections.
std::string fmt(double value, int precision = 2);
std::string fmtSize(size_t bytes);
/// Median of a sample (copied, then partially sorted).
double median(std::vector<double> samples);
/// Seconds since an arbitrary epoch (steady clock).
double nowSec();

}  // namespace mscclpp::bench

#endif  // MSCCLPP_TEST_BENCH_BENCH_HPP_
