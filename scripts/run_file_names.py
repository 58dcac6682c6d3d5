"""House rule: a run folder's file names are spelled once, in runfolder/run_files.h. Lists every
C++ string literal elsewhere (outside runfolder/ and tests/) that is exactly one of those names;
exits 1 if there is any. Run from the repository root (CTest does):
    python scripts/run_file_names.py core grammar ... cli bench"""
import pathlib
import re
import sys

HOME = pathlib.Path("runfolder/run_files.h")
NAME = re.compile(r'constexpr std::string_view k\w+ = "([^"]+)"')
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def main(folders):
    names = set(NAME.findall(HOME.read_text()))
    if len(names) < 10:
        print(f"{HOME}: expected the run file names, found {sorted(names)}")
        return 2
    names.discard("runs.jsonl.gz")  # the archive of many runs, not a file of one run
    found = []
    for folder in folders:
        for path in sorted(pathlib.Path(folder).rglob("*")):
            if path.suffix not in (".cpp", ".h", ".hpp") or path.is_relative_to("runfolder"):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for literal in LITERAL.findall(line):
                    if literal in names:
                        found.append(f"{path}:{number}: \"{literal}\" (use runfolder/run_files.h)")
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
