#!/usr/bin/env python3
"""Finds the mechanical forms of two kinds of mistake that a compiler lets through.

In Sources, a conversion of a floating-point value to an integer type that can trap:
  float-to-int   `Int(x.rounded())`, `Int64(seconds * 1000)` and the like. A value that came
                 from outside (a receiver, a broker, a file) can be NaN or beyond the type's
                 range; use `Int(saturating:)`, `Int64(saturating:)` or `clamping:` on an
                 already-integer value.

In Tests, a test that can pass without checking what its name says:
  guard-return   `guard ... else { return }`: the test passes silently when the guard fails.
  for-await      a `for await` loop: a wait with no bound unless the stream is known to end
                 (finished before the loop) or the loop runs in a task that a bounded wait ends.
  print-figure   `print(` of an interpolated value: a figure printed is not a figure checked.

Each finding is `path:line: rule: text`. An exception is listed in Scripts/lint-patterns.allow
as `rule path: text-of-the-line  # why it is fine` (the line's text, trimmed, so that it
survives edits elsewhere in the file). An allow-list entry that matches nothing is reported too
(stale exceptions hide nothing new). Exit 1 when there is a finding or a stale entry.

  Scripts/lint-patterns.py               check the tree
  Scripts/lint-patterns.py --self-test   plant one example of each pattern in a scratch tree
                                         and fail unless each is found (and an allowed one not)
"""
import os
import re
import sys
import tempfile

INTEGER = r"\b(?:U?Int(?:8|16|32|64)?)\("
SAFE_LABELS = ("saturating:", "clamping:", "exactly:", "truncatingIfNeeded:", "bitPattern:")
FLOAT_HINTS = re.compile(
    r"\.rounded\(|\.squareRoot\(|timeIntervalSince|\b(?:floor|ceil|round|log|log10|pow|exp)\(|"
    r"\* ?1_?000\b|\* ?1e\d|/ ?1e\d|\bDouble\(|\.seconds\b|(?<!\w)(?:seconds|meters)\b|"
    r"[a-z](?:Seconds|Meters|Degrees)\b|(?<!\w)(?:fraction|rate|p)\b|\* ?0\.\d"
)


def call_argument(text, start):
    """The text between the parenthesis at `start` and its match (or to the line's end)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index]
    return text[start + 1 :]


def float_to_int(line):
    for match in re.finditer(INTEGER, line):
        argument = call_argument(line, match.end() - 1).strip()
        if argument.startswith(SAFE_LABELS):
            continue
        # The argument's own integer conversions are checked where they stand.
        inner = re.sub(INTEGER + r"[^()]*\)", "", argument)
        if FLOAT_HINTS.search(inner):
            return True
    return False


def swift_files(root, folder):
    base = os.path.join(root, folder)
    for directory, _, names in os.walk(base):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(directory, name)


def findings(root):
    found = []
    for path in swift_files(root, "Sources"):
        relative = os.path.relpath(path, root)
        for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
            code = line.split("//", 1)[0]
            if float_to_int(code):
                found.append(("float-to-int", relative, number, line.strip()))
    for path in swift_files(root, "Tests"):
        relative = os.path.relpath(path, root)
        # Test data, not tests: programs (Tests/Fixtures/corelocation) whose printed output is
        # what a test checks.
        if relative.startswith(os.path.join("Tests", "Fixtures") + os.sep):
            continue
        for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
            code = line.split("//", 1)[0]
            if re.search(r"\belse\s*\{\s*return\s*\}", code):
                found.append(("guard-return", relative, number, line.strip()))
            if re.search(r"\bfor\s+(?:try\s+)?await\b", code):
                found.append(("for-await", relative, number, line.strip()))
            # Swift's print (Python's, in an embedded script, has file=sys.stderr).
            if re.search(r"(?<![\w.])print\(", code) and "sys.std" not in code:
                found.append(("print-figure", relative, number, line.strip()))
    return found


def allowances(path):
    entries = []
    if not os.path.exists(path):
        return entries
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        body, _, reason = line.partition("  # ")
        rule, _, rest = body.partition(" ")
        file, _, text = rest.partition(": ")
        if not reason.strip() or not text.strip():
            sys.exit(f"{path}:{number}: expected 'rule path: line text  # reason'")
        entries.append((rule, file, text.strip(), number))
    return entries


def check(root, allow_path):
    allowed = allowances(allow_path)
    used = set()
    problems = []
    for rule, file, number, text in findings(root):
        match = [e for e in allowed if e[0] == rule and e[1] == file and e[2] == text]
        if match:
            used.update(e[3] for e in match)
        else:
            problems.append(f"{file}:{number}: {rule}: {text}")
    for rule, file, text, number in allowed:
        if number not in used:
            problems.append(f"{allow_path}:{number}: stale allowance ({rule} {file}: {text})")
    return problems


def self_test():
    planted = {
        "Sources/M/Planted.swift": "let a = Int(speed.rounded())\nlet b = Int(saturating: x)\n",
        "Tests/T/PlantedTests.swift": (
            "guard case .departure = event else { return }\n"
            "for await fix in stream { break }\n"
            'print("rate \\(rate)")\n'
            "let fine = 1\n"
        ),
    }
    expected = {
        ("float-to-int", "Sources/M/Planted.swift", 1),
        ("guard-return", "Tests/T/PlantedTests.swift", 1),
        ("for-await", "Tests/T/PlantedTests.swift", 2),
        ("print-figure", "Tests/T/PlantedTests.swift", 3),
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            open(os.path.join(root, name), "w").write(text)
        got = {(rule, file, number) for rule, file, number, _ in findings(root)}
        allow = os.path.join(root, "allow")
        open(allow, "w").write(
            "for-await Tests/T/PlantedTests.swift: for await fix in stream { break }"
            "  # planted\nprint-figure Tests/T/Gone.swift: print(1)  # stale\n")
        problems = check(root, allow)
    missing = expected - got
    extra = got - expected
    ok = not missing and not extra
    ok = ok and not any("for-await" in p and "stale" not in p for p in problems)
    ok = ok and any("stale allowance" in p for p in problems) and len(problems) == 4
    for item in sorted(missing):
        print(f"self-test: the planted {item[0]} at {item[1]}:{item[2]} was not found")
    for item in sorted(extra):
        print(f"self-test: {item[0]} at {item[1]}:{item[2]} was found but not planted")
    print("self-test: " + ("each planted pattern found" if ok else f"failed: {problems}"))
    return 0 if ok else 1


def main():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems = check(root, os.path.join(root, "Scripts", "lint-patterns.allow"))
    for problem in problems:
        print(problem)
    print(f"lint-patterns: {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
