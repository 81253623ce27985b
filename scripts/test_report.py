#!/usr/bin/env python3
"""After ctest --repeat until-pass:2: names the tests that passed only on their second run, and
repeats the last lines of output of each run that failed, so that a CI log's tail shows them.

Usage: test_report.py build/Testing/Temporary/LastTest.log [lines per failed run]"""
import re
import sys

HEADER = re.compile(r"^\d+/\d+ Test: (.+)$")


def runs(path):
    """Yields (test name, output lines, passed) for every run the log records, in order."""
    name, output, in_output = None, [], False
    with open(path, errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            header = HEADER.match(line)
            if header:
                name, output, in_output = header.group(1), [], False
            elif name is None:
                continue
            elif line == "Output:":
                in_output = True
            elif line == "<end of output>":
                in_output = False
            elif in_output:
                if not line.startswith("-" * 58) or output:
                    output.append(line)
            elif line in ("Test Passed.", "Test Failed."):
                yield name, output, line == "Test Passed."
                name = None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    keep = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    failures, outcome = [], {}
    for name, output, passed in runs(sys.argv[1]):
        if not passed:
            failures.append((name, output))
        outcome[name] = passed
    for name, output in failures:
        verdict = "passed on its second run" if outcome[name] else "failed"
        print(f"\n===== {name}: a run failed ({verdict}); its last {keep} lines of output:")
        print("\n".join(output[-keep:]))
    retried = sorted(name for name, _ in failures if outcome[name])
    still = sorted({name for name, _ in failures if not outcome[name]})
    if retried:
        print(f"\ntests that passed only on their second run: {', '.join(retried)}")
    if still:
        print(f"tests that failed twice: {', '.join(still)}")


if __name__ == "__main__":
    main()
