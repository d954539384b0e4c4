#!/usr/bin/env python3
"""check_results_links.py - every results/ file the documents name exists.

    tools/check_results_links.py [REPO]      check REPO (default: this checkout)
    tools/check_results_links.py --self-test check the checker on a tree of its own

Scans README.md, NEWS.md and docs/**/*.md for paths under results/.  A path
written as `results/...` is taken from the top of the repository; one written
as `../results/...` or `./results/...` from the document's folder.  A path
with `{a,b}` stands for each of its expansions, one with `*` or `?` for the
files it matches (at least one must).  Prints every path that names nothing,
with the document and line, and exits 1 if there is one; 0 otherwise.
"""

import glob
import os
import re
import sys
import tempfile

# A results/ path not preceded by another path's characters (so not
# build/results/ or DIR/results.csv), with brace groups kept whole.
PATH = re.compile(r"(?<![\w./-])((?:\.\.?/)*results/(?:[\w.*?+=@%~-]|/|\{[^{}\s]*\})*)")


def documents(repo):
    found = [os.path.join(repo, name) for name in ("README.md", "NEWS.md")]
    found += sorted(glob.glob(os.path.join(repo, "docs", "**", "*.md"), recursive=True))
    return [d for d in found if os.path.isfile(d)]


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alternative in m.group(1).split(","):
        out += expand_braces(path[: m.start()] + alternative + path[m.end() :])
    return out


def names_something(path):
    if any(c in path for c in "*?"):
        return bool(glob.glob(path))
    return os.path.exists(path)


def broken_references(repo):
    """(document, line number, path as written) for every path that names nothing."""
    broken = []
    for doc in documents(repo):
        with open(doc, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                for m in PATH.finditer(line):
                    written = m.group(1).rstrip(".")
                    base = os.path.dirname(doc) if written.startswith(".") else repo
                    for path in expand_braces(written):
                        if not names_something(os.path.normpath(os.path.join(base, path))):
                            broken.append((os.path.relpath(doc, repo), lineno, path))
    return broken


def check(repo):
    broken = broken_references(repo)
    for doc, lineno, path in broken:
        print(f"{doc}:{lineno}: {path} does not exist")
    if broken:
        print(f"check_results_links: {len(broken)} results/ path(s) name nothing")
        return 1
    print(f"check_results_links: every results/ path in {len(documents(repo))} documents exists")
    return 0


def self_test():
    with tempfile.TemporaryDirectory() as repo:
        os.makedirs(os.path.join(repo, "results", "bench"))
        os.makedirs(os.path.join(repo, "docs", "sub"))
        for name in ("a.json", "a.txt", "run-1.csv"):
            open(os.path.join(repo, "results", "bench", name), "w").close()
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("see `results/bench/a.json`, results/bench/a.{json,txt} and results/bench/run-*.csv.\n"
                    "not ours: build/results/x.json, DIR/results.csv\n")
        with open(os.path.join(repo, "docs", "sub", "page.md"), "w") as f:
            f.write("[data](../../results/bench/a.txt), [gone](../../results/bench/gone.json)\n"
                    "results/bench/b.{json,txt} and results/bench/none-*.csv\n")
        got = sorted(broken_references(repo))
        want = sorted([
            (os.path.join("docs", "sub", "page.md"), 1, "../../results/bench/gone.json"),
            (os.path.join("docs", "sub", "page.md"), 2, "results/bench/b.json"),
            (os.path.join("docs", "sub", "page.md"), 2, "results/bench/b.txt"),
            (os.path.join("docs", "sub", "page.md"), 2, "results/bench/none-*.csv"),
        ])
        if got != want:
            print(f"check_results_links --self-test: found {got}, expected {want}")
            return 1
        if check(repo) != 1:
            print("check_results_links --self-test: a tree with missing files passed")
            return 1
    print("check_results_links --self-test: passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.exit(check(os.path.abspath(repo)))
