#!/usr/bin/env python3
"""Sums test cases from the JUnit XML files Bazel leaves under a testlogs folder.

Usage: count_test_results.py TESTLOGS_DIR TARGET...
       count_test_results.py --xml FILE          (one JUnit file: pytest's --junitxml)
Prints "passed failed skipped" for the given test targets (//pkg:name). A target without an XML
file (it failed to build or crashed before writing one) counts as one failure. What failed goes to
standard error, a line per failed case with the first lines of its message, so that a run's summary
can repeat it (CI shows only the end of its log).
"""
import os
import sys
import xml.etree.ElementTree as ET


def gist(text):
    """The first lines of a failure message (gtest's first is only file:line), on one line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " | ".join(lines[:3])[:300]


def count(xml_path):
    """Returns (passed, failed, skipped, failures): failures names each failed case and why."""
    passed = failed = skipped = 0
    failures = []
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError:
        # An empty or cut XML file: its runner died before finishing it.
        return 0, 1, 0, ["(no readable result: the test crashed or was killed)"]
    for case in root.iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            failed += 1
            name = ".".join(filter(None, [case.get("classname"), case.get("name")]))
            failures.append(f"{name}: {gist(problem.get('message') or problem.text)}")
        elif case.find("skipped") is not None or case.get("status") == "notrun" or case.get("result") == "skipped":
            skipped += 1
        else:
            passed += 1
    if passed + failed + skipped == 0:
        # A suite that ran no case (e.g. a crash before the first test) is a failure.
        return 0, 1, 0, ["(no test case ran: the test crashed before its first case)"]
    return passed, failed, skipped, failures


def report(what, failures):
    for failure in failures:
        print(f"FAILED: {what}: {failure}", file=sys.stderr)


def main():
    if sys.argv[1] == "--xml":
        path = sys.argv[2]
        result = count(path) if os.path.exists(path) else (0, 1, 0, ["(no result file)"])
        report(os.path.basename(path), result[3])
        print(*result[:3])
        return
    logs, targets = sys.argv[1], sys.argv[2:]
    totals = [0, 0, 0]
    for target in targets:
        package, _, name = target.lstrip("/").partition(":")
        xml_path = os.path.join(logs, package, name, "test.xml")
        result = count(xml_path) if os.path.exists(xml_path) else (0, 1, 0, ["(no test.xml: it did not build or run)"])
        report(target, result[3])
        totals = [a + b for a, b in zip(totals, result[:3])]
    print(*totals)


if __name__ == "__main__":
    main()
