#!/usr/bin/env python3
"""check_results_links.py - the documents and results/ name each other both ways.

    tools/check_results_links.py [REPO]      check REPO (default: this checkout)
    tools/check_results_links.py --self-test check the checker on a tree of its own

The documents are README.md, NEWS.md, docs/**/*.md, man/pages/* and
bench/**/*.md.  A path in them written as `results/...` is taken from the top
of the repository; one written as `../results/...` or `./results/...` from the
document's folder.  A path with `{a,b}` stands for each of its expansions, one
with `*` or `?` for the files it matches (at least one must).

A results/ file is cited when a document names it, or names a folder whose
README.md is cited, or when a cited results/**/README.md names it, there also
by a path relative to the README's folder (`runs/*.json`).  Naming a folder
cites its README.md (and not every file in it).

Fails (exit 1), printing each finding, when
  - a path names nothing;
  - a file under results/ is cited by nothing;
  - a file under results/ is code or a patch (results/ holds data).
Exits 0 otherwise.
"""

import glob
import os
import re
import sys
import tempfile

# A results/ path not preceded by another path's characters (so not
# build/results/ or DIR/results.csv), with brace groups kept whole.
PATH = re.compile(r"(?<![\w./-])((?:\.\.?/)*results/(?:[\w.*?+=@%~-]|/|\{[^{}\s]*\})*)")
# Any path-like word, for the names a results/ README gives relative to itself.
WORD = re.compile(r"(?<![\w./-])((?:[\w.*?+=@%~-]|/|\{[^{}\s]*\})+)")
# What a folder of measured data must not hold.
CODE = (".py", ".sh", ".c", ".cc", ".cpp", ".h", ".patch", ".diff", ".fio")


def documents(repo):
    found = [os.path.join(repo, name) for name in ("README.md", "NEWS.md")]
    found += sorted(glob.glob(os.path.join(repo, "docs", "**", "*.md"), recursive=True))
    found += sorted(glob.glob(os.path.join(repo, "man", "pages", "*")))
    found += sorted(glob.glob(os.path.join(repo, "bench", "**", "*.md"), recursive=True))
    return [d for d in found if os.path.isfile(d)]


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alternative in m.group(1).split(","):
        out += expand_braces(path[: m.start()] + alternative + path[m.end() :])
    return out


def matches(path):
    """The existing paths that path names (a glob's matches, or the path itself)."""
    if any(c in path for c in "*?"):
        return glob.glob(path)
    return [path] if os.path.exists(path) else []


def named_paths(repo, doc, line):
    """(path as written, [what it names]) for every results/ path in one line of doc."""
    for m in PATH.finditer(line):
        written = m.group(1).rstrip(".")
        base = os.path.dirname(doc) if written.startswith(".") else repo
        for path in expand_braces(written):
            yield path, matches(os.path.normpath(os.path.join(base, path)))


def relative_names(readme, line):
    """Existing paths below a results/ README's folder that a word of its line names."""
    folder = os.path.dirname(readme)
    for m in WORD.finditer(line):
        word = m.group(1).rstrip(".")
        if not re.search(r"[A-Za-z0-9]", word) or word.startswith((".", "/", "results/")):
            continue
        for path in expand_braces(word):
            for found in matches(os.path.normpath(os.path.join(folder, path))):
                if found.startswith(folder + os.sep):
                    yield found


def scan(repo):
    """(broken, cited): broken = (document, line, path) for every path that names
    nothing; cited = the set of results/ files (absolute paths) cited."""
    results = os.path.join(repo, "results")
    broken, cited = [], set()
    queue = [(doc, False) for doc in documents(repo)]
    seen = set()

    def cite(path):
        if os.path.isdir(path):
            path = os.path.join(path, "README.md")
            if not os.path.isfile(path):
                return
        if path in cited:
            return
        cited.add(path)
        if os.path.basename(path) == "README.md" and path.startswith(results + os.sep):
            queue.append((path, True))

    while queue:
        doc, in_results = queue.pop(0)
        if doc in seen:
            continue
        seen.add(doc)
        with open(doc, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                for written, found in named_paths(repo, doc, line):
                    if not found:
                        broken.append((os.path.relpath(doc, repo), lineno, written))
                    for path in found:
                        cite(path)
                if in_results:
                    for path in relative_names(doc, line):
                        cite(path)
    return broken, cited


def results_files(repo):
    out = []
    for top, _, files in os.walk(os.path.join(repo, "results")):
        out += [os.path.join(top, name) for name in files]
    return sorted(out)


def broken_references(repo):
    """(document, line number, path as written) for every path that names nothing."""
    return scan(repo)[0]


def uncited_files(repo):
    """results/ files (relative to repo) that nothing cites."""
    cited = scan(repo)[1]
    return [os.path.relpath(p, repo) for p in results_files(repo) if p not in cited]


def code_files(repo):
    return [os.path.relpath(p, repo) for p in results_files(repo) if p.endswith(CODE)]


def check(repo):
    broken, cited = scan(repo)
    uncited = [os.path.relpath(p, repo) for p in results_files(repo) if p not in cited]
    code = code_files(repo)
    for doc, lineno, path in broken:
        print(f"{doc}:{lineno}: {path} does not exist")
    for path in uncited:
        print(f"{path}: cited by no document")
    for path in code:
        print(f"{path}: code or a patch in results/ (keep tools in bench/, data in results/)")
    if broken or uncited or code:
        print(f"check_results_links: {len(broken)} path(s) name nothing, {len(uncited)} results/ file(s) "
              f"cited by nothing, {len(code)} code file(s) in results/")
        return 1
    print(f"check_results_links: every results/ path in {len(documents(repo))} documents exists, "
          f"and each of the {len(results_files(repo))} results/ files is cited")
    return 0


def self_test():
    def write(repo, name, text=""):
        path = os.path.join(repo, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    failures = []
    with tempfile.TemporaryDirectory() as repo:
        for name in ("a.json", "a.txt", "run-1.csv"):
            write(repo, os.path.join("results", "bench", name))
        write(repo, "README.md", "see `results/bench/a.json`, results/bench/a.{json,txt} and results/bench/run-*.csv.\n"
                                 "not ours: build/results/x.json, DIR/results.csv\n")
        write(repo, os.path.join("docs", "sub", "page.md"),
              "[data](../../results/bench/a.txt), [gone](../../results/bench/gone.json)\n"
              "results/bench/b.{json,txt} and results/bench/none-*.csv\n")
        got = sorted(broken_references(repo))
        want = sorted([
            (os.path.join("docs", "sub", "page.md"), 1, "../../results/bench/gone.json"),
            (os.path.join("docs", "sub", "page.md"), 2, "results/bench/b.json"),
            (os.path.join("docs", "sub", "page.md"), 2, "results/bench/b.txt"),
            (os.path.join("docs", "sub", "page.md"), 2, "results/bench/none-*.csv"),
        ])
        if got != want:
            failures.append(f"missing paths: found {got}, expected {want}")

        # The other direction: a folder's README cites what it names relative to
        # itself, a README nobody cites cites nothing, and code is refused.
        write(repo, os.path.join("results", "run", "README.md"), "Machine: x.\n`tool > out.json`; runs/*.txt\n")
        write(repo, os.path.join("results", "run", "out.json"))
        write(repo, os.path.join("results", "run", "runs", "1.txt"))
        write(repo, os.path.join("results", "run", "left.json"))
        write(repo, os.path.join("results", "lost", "README.md"), "lost.json\n")
        write(repo, os.path.join("results", "lost", "lost.json"))
        write(repo, os.path.join("results", "probe.py"))
        write(repo, os.path.join("docs", "run.md"), "the run: `results/run/`\n")
        got = sorted(uncited_files(repo))
        want = sorted(os.path.join("results", *p.split("/")) for p in (
            "run/left.json", "lost/README.md", "lost/lost.json", "probe.py"))
        if got != want:
            failures.append(f"uncited files: found {got}, expected {want}")
        if code_files(repo) != [os.path.join("results", "probe.py")]:
            failures.append(f"code files: found {code_files(repo)}, expected results/probe.py")
        if check(repo) != 1:
            failures.append("a tree with missing, uncited and code files passed")
    with tempfile.TemporaryDirectory() as repo:
        write(repo, os.path.join("results", "run", "README.md"), "out.json\n")
        write(repo, os.path.join("results", "run", "out.json"))
        write(repo, os.path.join("docs", "run.md"), "`results/run/README.md`\n")
        if check(repo) != 0:
            failures.append("a tree whose every results/ file is cited failed")
    for failure in failures:
        print(f"check_results_links --self-test: {failure}")
    if failures:
        return 1
    print("check_results_links --self-test: passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.exit(check(os.path.abspath(repo)))
