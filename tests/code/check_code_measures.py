#!/usr/bin/env python3
"""The plain measures of the code (issue 29's "done when"), checked on the tree:

- no C++ file under miniapp/ longer than 400 lines;
- no C++ function (or lambda) under miniapp/ longer than 80 lines, their extents from
  universal-ctags (Debian's universal-ctags, which scripts/bootstrap-debian.sh installs);
- no Python function in the project longer than 80 lines (the standard library's ast).

Before the tree, the checker is run on a made-up tree with one file, one C++ function and one
Python function just over each limit and one just at it, and must flag exactly the three: a
checker that flags nothing fails here rather than passing the project.

usage: check_code_measures.py SOURCE_DIR
Prints each offence with its file, line and size, and exits 1 if there is any; prints
"skipped: <why>" and exits 0 where universal-ctags is missing.
"""
import ast
import os
import shutil
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
SKIPPED_DIRS = {".git", "build", "build-bundle", "__pycache__", "node_modules"}


def cpp_files(root):
    for d, dirs, files in os.walk(os.path.join(root, "miniapp")):
        dirs[:] = sorted(x for x in dirs if x not in SKIPPED_DIRS)
        for f in sorted(files):
            if f.endswith((".cpp", ".hpp")):
                yield os.path.join(d, f)


def is_build_tree(d):
    return os.path.exists(os.path.join(d, "CMakeCache.txt"))


def python_files(root):
    for d, dirs, files in os.walk(root):
        # Top-level build* directories are ignored (.gitignore: /build*/): build-offline-* holds
        # the bundle's unpacked Kokkos sources, with their own Python.
        dirs[:] = sorted(x for x in dirs if x not in SKIPPED_DIRS and not x.startswith(".")
                         and not (d == root and x.startswith("build"))
                         and not is_build_tree(os.path.join(d, x)))
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def long_files(root):
    for path in cpp_files(root):
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE_LINES:
            yield f"{os.path.relpath(path, root)}: {n} lines (at most {MAX_FILE_LINES})"


def long_cpp_functions(root, ctags):
    paths = list(cpp_files(root))
    out = subprocess.run([ctags, "--language-force=c++", "--kinds-c++=f", "--fields=+ne", "--output-format=u-ctags",
                          "-o", "-", *paths], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("!_"):
            continue
        fields = line.split("\t")
        extra = dict(f.split(":", 1) for f in fields[3:] if ":" in f)
        if "line" not in extra or "end" not in extra:
            continue
        size = int(extra["end"]) - int(extra["line"]) + 1
        if size > MAX_FUNCTION_LINES:
            name = "a lambda" if fields[0].startswith("__anon") else fields[0]
            yield (f"{os.path.relpath(fields[1], root)}:{extra['line']}: {name} is {size} lines "
                   f"(at most {MAX_FUNCTION_LINES})")


def long_python_functions(root):
    for path in python_files(root):
        with open(path, encoding="utf-8") as f:
            try:
                tree = ast.parse(f.read(), path)
            except SyntaxError as e:
                yield f"{os.path.relpath(path, root)}: does not parse ({e})"
                continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    yield (f"{os.path.relpath(path, root)}:{node.lineno}: {node.name} is {size} lines "
                           f"(at most {MAX_FUNCTION_LINES})")


def offences(root, ctags):
    return [*long_files(root), *long_cpp_functions(root, ctags), *long_python_functions(root)]


def self_check(ctags):
    """The checker on a made-up tree: each limit once exceeded by one line and once met exactly."""
    body = "  x += 1;\n"
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "miniapp"))
        with open(os.path.join(root, "miniapp", "long.cpp"), "w") as f:
            f.write("int too_long(int x) {\n" + body * (MAX_FUNCTION_LINES - 1) + "}\n")  # 81 lines
            f.write("int just_right(int x) {\n" + body * (MAX_FUNCTION_LINES - 2) + "}\n")  # 80
            f.write("// filler\n" * (MAX_FILE_LINES + 1 - 2 * MAX_FUNCTION_LINES - 1))  # 401 in all
        with open(os.path.join(root, "miniapp", "short.hpp"), "w") as f:
            f.write("// filler\n" * MAX_FILE_LINES)
        with open(os.path.join(root, "tool.py"), "w") as f:
            f.write("def too_long():\n" + "    x = 1\n" * MAX_FUNCTION_LINES + "\n\n")  # 81 lines
            f.write("def just_right():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES - 1))  # 80
        found = offences(root, ctags)
    expected = ["long.cpp: 401 lines", "too_long is 81 lines", "tool.py:1: too_long is 81 lines"]
    missing = [e for e in expected if not any(e in o for o in found)]
    if missing or len(found) != len(expected):
        print("FAIL: the checker itself is wrong on a made-up tree: expected offences containing "
              f"{expected}, got {found}")
        return False
    return True


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    ctags = shutil.which("ctags")
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout if ctags else ""
    if "Universal Ctags" not in version:
        print("skipped: universal-ctags is not installed (Debian: universal-ctags; "
              "scripts/bootstrap-debian.sh installs it), so C++ function extents cannot be measured")
        return 0
    if not self_check(ctags):
        return 1
    found = offences(root, ctags)
    for o in found:
        print(o)
    if found:
        print(f"FAIL: {len(found)} offences against the code's plain measures (issue 29)")
        return 1
    print(f"ok: no file under miniapp/ over {MAX_FILE_LINES} lines, no C++ or Python function over "
          f"{MAX_FUNCTION_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
