#!/usr/bin/env python3
"""Sums test cases from the JUnit XML files Bazel leaves under a testlogs folder.

Usage: count_test_results.py TESTLOGS_DIR TARGET...
       count_test_results.py --xml FILE          (one JUnit file: pytest's --junitxml)
Prints "passed failed skipped" for the given test targets (//pkg:name). A target without an XML
file (it failed to build or crashed before writing one) counts as one failure.
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(xml_path):
    passed = failed = skipped = 0
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError:
        return 0, 1, 0  # an empty or cut XML file: its runner died before finishing it
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None or case.get("status") == "notrun" or case.get("result") == "skipped":
            skipped += 1
        else:
            passed += 1
    if passed + failed + skipped == 0:
        # A suite that ran no case (e.g. a crash before the first test) is a failure.
        failed = 1
    return passed, failed, skipped


def main():
    if sys.argv[1] == "--xml":
        print(*(count(sys.argv[2]) if os.path.exists(sys.argv[2]) else (0, 1, 0)))
        return
    logs, targets = sys.argv[1], sys.argv[2:]
    totals = [0, 0, 0]
    for target in targets:
        package, _, name = target.lstrip("/").partition(":")
        xml_path = os.path.join(logs, package, name, "test.xml")
        result = count(xml_path) if os.path.exists(xml_path) else (0, 1, 0)
        if result[1]:
            print(f"FAILED: {target}", file=sys.stderr)
        totals = [a + b for a, b in zip(totals, result)]
    print(*totals)


if __name__ == "__main__":
    main()
