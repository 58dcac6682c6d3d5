#!/usr/bin/env python3
"""Checks an installed include tree: every header includes only headers that were installed.

A layer installs only its public headers (PUBLIC_HEADERS in its CMakeLists.txt, cmake/layers.cmake);
a public header that includes one of the layer's internals would not compile in a program that
uses the installed package. This reads every file under ROOT (<prefix>/include/maskprior) and
reports each `#include "..."`, and each `#include <LAYER/...>` of a layer in the tree, that names
no file under ROOT (nor next to the header that includes it).
  usage: check_public_headers.py ROOT
Exit status: 0 when every include is installed, 1 otherwise (one line per include, file:line).
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.MULTILINE)


def problems(root):
    """Lines `HEADER:LINE: includes "NAME", which is not installed`, and the number of headers."""
    headers = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    layers = {h.split("/")[0] for h in headers if "/" in h}
    found = []
    for header in sorted(headers):
        text = (root / header).read_text(encoding="utf-8", errors="replace")
        beside = pathlib.PurePosixPath(header).parent
        for match in INCLUDE.finditer(text):
            delimiter, name = match.groups()
            ours = delimiter == '"' or name.split("/")[0] in layers
            if not ours or name in headers or (beside / name).as_posix() in headers:
                continue
            line = text.count("\n", 0, match.start()) + 1
            found.append(f'{header}:{line}: includes "{name}", which is not installed')
    return found, len(headers)


def main(argv):
    if len(argv) != 2:
        print("usage: check_public_headers.py ROOT", file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    found, count = problems(root)
    if count == 0:
        print(f"{root}: no installed headers", file=sys.stderr)
        return 1
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) of headers that are not installed", file=sys.stderr)
        return 1
    print(f"{count} installed headers; each includes only installed headers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
