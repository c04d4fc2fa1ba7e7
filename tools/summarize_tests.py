#!/usr/bin/env python3
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Sums the gtest XML reports under a directory into one line: "N passed, N failed, N skipped".

Reports of one multi-process run (one file per rank, in one folder) count each test once: failed if
it failed on any rank, skipped if it was skipped on every rank that ran it, passed otherwise.
A ctest entry that failed without a gtest report saying so (a crash, a non-gtest check) is counted
as one more failure.
Checks that ran outside ctest add their own counts (extra failures, and extra skipped: a check that
could not run here, such as the format check without clang-format).
Usage: summarize_tests.py <results dir> <ctest LastTestsFailed.log or -> [extra failures [extra skipped]]
"""
import collections
import pathlib
import sys
import xml.etree.ElementTree as ET


def outcome(case):
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    if case.get("result") == "skipped" or case.find("skipped") is not None or case.get("status") == "notrun":
        return "skipped"
    return "passed"


def main():
    root = pathlib.Path(sys.argv[1])
    failed_log = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    extra_failures = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    extra_skipped = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    # key: (group, test) where group is the folder of a multi-process run, or the file otherwise
    results = collections.defaultdict(list)
    failed_names = []
    for report in sorted(root.rglob("*.xml")):
        group = report.parent.name if report.name.startswith("rank") else str(report)
        try:
            tree = ET.parse(report)
        except ET.ParseError:
            results[(group, report.name)].append("failed")
            continue
        for case in tree.iter("testcase"):
            if case.get("status") == "notrun" and case.get("result") != "skipped":
                continue  # filtered out (disabled) tests are not runs
            name = f"{case.get('classname')}.{case.get('name')}"
            results[(group, name)].append(outcome(case))
    counts = collections.Counter()
    for (group, name), outcomes in results.items():
        if "failed" in outcomes:
            counts["failed"] += 1
            failed_names.append(f"{group}: {name}")
        elif all(o == "skipped" for o in outcomes):
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    reported = {name for _, name in (f.split(": ", 1) for f in failed_names)}
    reported_groups = {f.split(": ", 1)[0] for f in failed_names}
    if failed_log and failed_log.exists():
        for line in failed_log.read_text().splitlines():
            entry = line.split(":", 1)[-1].strip()
            mp_group = entry.replace("mp_unit_tests_", "mp_")  # mp_unit_tests_np2 -> folder mp_np2
            if entry in reported or mp_group in reported_groups:
                continue
            counts["failed"] += 1
            failed_names.append(f"ctest: {entry}")
    for name in failed_names:
        print(f"FAILED {name}")
    failed = counts["failed"] + extra_failures
    print(f"{counts['passed']} passed, {failed} failed, {counts['skipped'] + extra_skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
