#!/usr/bin/env python3
"""Compares per-case outcomes of an external suite, plain against the shim in each mode.

compare.py --suite NAME --plain RESULTS [--mode NAME=RESULTS ...] [--exclude FILE]

A RESULTS file is JSON: {"cases": {case: [outcome, detail]}, "notes": [...]}, written by
the suite's parser (parse_junit, parse_automake, parse_stress_ng below, or by hand).
The outcome is a short word (ok, FAIL, ERROR, skipped, PASS, SKIP, ...); detail is the
failure text, shown only for a difference.

An exclusion file has one "PATTERN<TAB or spaces>REASON" per line (# comments): cases
matching the fnmatch PATTERN are not compared, and are printed with the reason.  A case
whose plain outcome is a failure (FAIL, ERROR, XPASS, fail, ...) is excluded too, and says so.
Everything else must have the same outcome plain and in every mode:
"ok - CASE: OUTCOME", or "not ok - CASE [MODE]: plain OUTCOME, shim OUTCOME" with the shim's
failure text.  A case that a mode's run did not report at all is a difference ("missing").
Last line: "N passed, M failed" (M = cases that differ in some mode); exit 1 if M > 0.

Parsers (the drivers call them): compare.py parse-junit XML OUT, parse-automake DIR OUT,
parse-stress-ng LOG RC OUT STRESSOR...
"""
import argparse
import fnmatch
import glob
import json
import os
import re
import sys

FAILING = {"FAIL", "ERROR", "XPASS", "fail", "error", "missing", "crash", "verify-fail",
           "unexpected-success"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"cases": {}, "notes": ["no results (%s)" % e]}


def save(path, cases, notes=()):
    with open(path, "w") as f:
        json.dump({"cases": cases, "notes": list(notes)}, f, indent=0, sort_keys=True)


def parse_junit(xml_path, out):
    """CPython's regrtest --junit-xml: one <testcase> per case."""
    import xml.etree.ElementTree as ET
    cases, notes = {}, []
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as e:
        notes.append("no junit results: %s" % e)
        root = None
    if root is not None:
        for tc in root.iter("testcase"):
            name = tc.get("name")
            outcome, detail = "ok", ""
            for child in tc:
                if child.tag in ("failure", "error"):
                    outcome = "FAIL" if child.tag == "failure" else "ERROR"
                    detail = (child.get("message") or "") + "\n" + (child.text or "")
                    break
                if child.tag == "skipped":
                    outcome, detail = "skipped", child.get("message") or (child.text or "")
            # A class-level failure (setUpClass) is reported with the class as name:
            # keep it as its own case.
            cases[name] = [outcome, detail.strip()]
    save(out, cases, notes)


def parse_automake(test_dir, out):
    """Automake's parallel harness: one NAME.trs per test with ':test-result: WORD'."""
    cases = {}
    for trs in sorted(glob.glob(os.path.join(test_dir, "*.trs"))):
        name = os.path.basename(trs)[:-4]
        results = []
        with open(trs, errors="replace") as f:
            for line in f:
                if line.startswith(":test-result:"):
                    results.append(line.split(":", 2)[2].strip())
        outcome = results[-1] if results else "missing"
        for bad in ("ERROR", "FAIL", "XPASS"):
            if bad in results:
                outcome = bad
        detail = ""
        if outcome in FAILING:
            try:
                with open(trs[:-4] + ".log", errors="replace") as f:
                    detail = "".join(f.readlines()[-15:])
            except OSError:
                pass
        cases[name] = [outcome, detail.strip()]
    save(out, cases)


def parse_stress_ng(log, rc, out, stressors):
    """One stress-ng run of several stressors with --verify and --metrics-brief.

    Per stressor: 'verify-fail' when a fail/error line of it mentions verification or a
    mismatch, 'fail' on any other fail/error line of it, 'skipped' when stress-ng says it
    skipped it, 'ok' when it is in the metrics table, 'missing' otherwise.  The run's exit
    status is a case of its own ('exit')."""
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()
    cases = {}
    for s in stressors:
        mine = [l for l in lines if re.search(r"\b%s(-[0-9]+)?:" % re.escape(s), l)
                or re.search(r"\]\s+%s\s" % re.escape(s), l)]
        bad = [l for l in mine if re.search(r"stress-ng: (fail|error):", l)
               or re.search(r"\b(fail|error)", l.split("]", 1)[-1], re.I)]
        verify = [l for l in bad if re.search(r"verif|mismatch|corrupt|incorrect|unexpected|expected",
                                              l, re.I)]
        if verify:
            cases[s] = ["verify-fail", "\n".join(verify[:10])]
        elif bad:
            cases[s] = ["fail", "\n".join(bad[:10])]
        elif any(re.search(r"skipp|not implemented|not supported", l, re.I) for l in mine):
            cases[s] = ["skipped", "\n".join(mine[:3])]
        elif any(re.search(r"metrc:.*\]\s+%s\s+[0-9]" % re.escape(s), l) for l in lines):
            cases[s] = ["ok", ""]
        else:
            cases[s] = ["missing", "\n".join(lines[-10:])]
    cases["exit"] = ["exit %s" % rc, "" if str(rc) == "0" else "\n".join(lines[-15:])]
    save(out, cases)


def read_exclusions(path):
    rules = []
    if not path:
        return rules
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            rules.append((parts[0], parts[1] if len(parts) > 1 else "(no reason given)"))
    return rules


def indent(text, n=12):
    lines = text.splitlines()[-n:]
    return "".join("    %s\n" % l for l in lines)


def compare(args):
    plain = load(args.plain)
    modes = []
    for spec in args.mode:
        name, path = spec.split("=", 1)
        modes.append((name, load(path)))
    rules = read_exclusions(args.exclude)
    for note in plain.get("notes", []):
        print("# plain: %s" % note)
    for name, res in modes:
        for note in res.get("notes", []):
            print("# %s: %s" % (name, note))

    all_cases = set(plain["cases"])
    for _, res in modes:
        all_cases |= set(res["cases"])
    passed, failed, excluded = 0, 0, []
    counts = {}
    for case in sorted(all_cases):
        rule = next((r for r in rules if fnmatch.fnmatchcase(case, r[0])), None)
        p = plain["cases"].get(case, ["missing", "not reported by the plain run"])
        if rule:
            excluded.append((case, "excluded by %s: %s" % (rule[0], rule[1])))
            continue
        if p[0] in FAILING:
            first = (p[1].strip().splitlines() or [""])[-1][:160]
            excluded.append((case, "fails plain (%s): %s" % (p[0], first)))
            continue
        diffs = []
        for name, res in modes:
            s = res["cases"].get(case, ["missing", "not reported by the %s run" % name])
            if s[0] != p[0]:
                diffs.append((name, s))
        if diffs:
            failed += 1
            for name, s in diffs:
                print("not ok - %s %s [%s]: plain %s, shim %s" % (args.suite, case, name, p[0], s[0]))
                if s[1]:
                    sys.stdout.write(indent(s[1]))
                if p[1] and p[0] != "ok":
                    sys.stdout.write("    plain: %s\n" % p[1].splitlines()[0][:200])
        else:
            passed += 1
            counts[p[0]] = counts.get(p[0], 0) + 1
            if not args.quiet:
                print("ok - %s %s: %s in plain and %s" % (args.suite, case, p[0],
                                                          ", ".join(n for n, _ in modes)))
    if excluded:
        print("# %d excluded:" % len(excluded))
        for case, why in excluded:
            print("#   %s: %s" % (case, why))
    print("# %s: %d cases compared in plain and %s (%s), %d excluded" % (
        args.suite, passed + failed, ", ".join(n for n, _ in modes) or "no mode",
        ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())), len(excluded)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "parse-junit":
        return parse_junit(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "parse-automake":
        return parse_automake(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "parse-stress-ng":
        return parse_stress_ng(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--mode", action="append", default=[])
    ap.add_argument("--exclude")
    ap.add_argument("--quiet", action="store_true", help="do not print the cases that agree")
    return compare(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main() or 0)
