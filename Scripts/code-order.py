#!/usr/bin/env python3
"""Lists the functions of waymarkd that callgrind profiles saw run, as linker section names.

usage: Scripts/code-order.py CALLGRIND_OUT...

Reads callgrind output files (written with --demangle=no) and prints `.text.<symbol>` for each
function of the executable named `waymarkd` that appears in them, in first-seen order, each once:
the input of gold's `--section-ordering-file`. Functions of shared libraries and addresses with
no symbol are left out.
"""
import re
import sys

ENTRY = re.compile(r"(c?(?:ob|fn))=\((\d+)\)(?: (.*))?$")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    seen = set()
    for path in sys.argv[1:]:
        objects, functions = {}, {}
        current_object = None
        with open(path, errors="replace") as profile:
            for line in profile:
                match = ENTRY.match(line.rstrip("\n"))
                if not match:
                    continue
                kind, number, name = match.groups()
                table = objects if kind.endswith("ob") else functions
                if name:
                    table[number] = name
                if kind == "ob":
                    current_object = objects.get(number)
                elif kind == "fn":
                    function = functions.get(number)
                    if (current_object or "").endswith("/waymarkd") and function \
                            and not function.startswith("0x") and function not in seen:
                        seen.add(function)
                        print(".text." + function)


if __name__ == "__main__":
    main()
