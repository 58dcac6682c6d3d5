#!/usr/bin/env python3
"""Lists functions (and lambdas) whose body is longer than a limit, in clang-formatted C++.

A body starts at a line that ends with `{` after a closing parenthesis (a function, method or
lambda head, not if/for/while/switch/catch) and ends at its matching `}`; strings, character
literals and comments are skipped when counting braces. The test no_function_over_80_lines runs it
over every layer.
  usage: function_length.py [--max 80] FILE_OR_FOLDER...
A folder stands for the C++ sources below it (.cpp, .h, .hpp), except those in a `data` folder.
"""
import os
import re
import sys

CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|catch|else if|do)\b")


def code_only(text):
    """The text with comments and string, raw-string and char literals blanked, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        raw = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if raw:
            end = text.find(")" + raw.group(1) + '"', i)
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text[i] in "\"'":
            quote, i = text[i], i + 1
            while i < n and text[i] != quote and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def long_functions(path, limit):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    code = code_only(text).split("\n")
    found = []
    for start, text in enumerate(code):
        stripped = text.rstrip()
        if not stripped.endswith("{") or ")" not in stripped or CONTROL.match(stripped):
            continue
        depth = 0
        for end in range(start, len(code)):
            depth += code[end].count("{") - code[end].count("}")
            if depth <= 0:
                break
        body = end - start - 1
        if body > limit:
            found.append((start + 1, body, lines[start].strip()))
    return found


def sources(paths):
    """The files named, and the C++ sources below the folders named, in order."""
    for path in paths:
        if not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "data")
            for name in sorted(files):
                if name.endswith((".cpp", ".h", ".hpp")):
                    yield os.path.join(root, name)


def main(argv):
    limit = 80
    if argv[:1] == ["--max"]:
        limit, argv = int(argv[1]), argv[2:]
    bad = 0
    for path in sources(argv):
        for line, body, head in long_functions(path, limit):
            print(f"{path}:{line}: function body of {body} lines (limit {limit}): {head}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
