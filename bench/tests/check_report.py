#!/usr/bin/python3
"""Runs a `hybridio bench` command and checks the JSON report it writes.

Usage: check_report.py --schema FILE [--expect-results N] [--expect-skipped N] [--kind K]
                       [--expect-epochs E] [--expect-au]
                       [--stdout-json | --expect-stdout REGEX] -- COMMAND...

The command must exit 0 and write its report to the path given by its
--json=PATH option (or, with --stdout-json and --json=-, to stdout, which
must then hold the JSON document and nothing else).  The report is checked
against docs/bench.schema.json (python3-jsonschema when installed, else a
small built-in validator for the subset the schema uses) and for sense:
every measured result moved bytes, at a positive rate, in every run.
With --expect-stdout, the command's stdout (the table) must also match
REGEX (Python syntax, searched, `.` matching newlines too).
With --kind train, the `train` object is checked too: every measured
policy has E epochs (--expect-epochs) in the summary and in every run,
a run per repeat, hit rates in [0, 1], every epoch read the whole dataset
and, unless --no-verify was given, checked every byte of it; with
--expect-au every epoch's accelerator utilisation is in (0, 1].
"""
import argparse
import json
import re
import subprocess
import sys


def mini_validate(doc, schema, root, path="$"):
    """The subset of draft-07 that docs/bench.schema.json uses."""
    if "$ref" in schema:
        ref = schema["$ref"].lstrip("#/").split("/")
        target = root
        for part in ref:
            target = target[part]
        return mini_validate(doc, target, root, path)
    errors = []
    types = schema.get("type")
    if types:
        types = types if isinstance(types, list) else [types]
        ok = {
            "object": isinstance(doc, dict), "array": isinstance(doc, list), "string": isinstance(doc, str),
            "boolean": isinstance(doc, bool), "null": doc is None,
            "integer": isinstance(doc, int) and not isinstance(doc, bool),
            "number": isinstance(doc, (int, float)) and not isinstance(doc, bool),
        }
        if not any(ok[t] for t in types):
            return [f"{path}: expected {types}, got {type(doc).__name__}"]
    if "const" in schema and doc != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if "enum" in schema and doc not in schema["enum"]:
        errors.append(f"{path}: {doc!r} not in {schema['enum']}")
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        if "minimum" in schema and doc < schema["minimum"]:
            errors.append(f"{path}: {doc} < {schema['minimum']}")
        if "maximum" in schema and doc > schema["maximum"]:
            errors.append(f"{path}: {doc} > {schema['maximum']}")
        if "exclusiveMinimum" in schema and doc <= schema["exclusiveMinimum"]:
            errors.append(f"{path}: {doc} <= {schema['exclusiveMinimum']}")
    if isinstance(doc, str) and len(doc) < schema.get("minLength", 0):
        errors.append(f"{path}: shorter than {schema['minLength']}")
    if isinstance(doc, dict):
        for key in schema.get("required", []):
            if key not in doc:
                errors.append(f"{path}: missing '{key}'")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in doc.items():
            if key in props:
                errors += mini_validate(value, props[key], root, f"{path}.{key}")
            elif extra is False:
                errors.append(f"{path}: unexpected '{key}'")
            elif isinstance(extra, dict):
                errors += mini_validate(value, extra, root, f"{path}.{key}")
    if isinstance(doc, list):
        if len(doc) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(doc):
                errors += mini_validate(item, schema["items"], root, f"{path}[{i}]")
    return errors


def validate(doc, schema):
    try:
        import jsonschema
    except ImportError:
        return mini_validate(doc, schema, schema)
    v = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def check_train(doc, expect_epochs, expect_au):
    """The training report's `train` object against its results."""
    t = doc.get("train")
    if t is None:
        return ["no train object"]
    errors = []
    epochs = t["epochs"]
    if expect_epochs is not None and epochs != expect_epochs:
        errors.append(f"train.epochs {epochs}, expected {expect_epochs}")
    repeat = doc["jobs"][0]["settings"]["repeat"]
    measured = {r["policy"] for r in doc["results"]}
    for p in t["policies"]:
        where = f"train/{p['policy']}"
        if p["policy"] not in measured:
            continue
        if len(p["epochs"]) != epochs:
            errors.append(f"{where}: {len(p['epochs'])} epoch summaries, expected {epochs}")
        if len(p["runs"]) != repeat:
            errors.append(f"{where}: {len(p['runs'])} runs, expected {repeat}")
        for i, run in enumerate(p["runs"]):
            if [e["epoch"] for e in run] != list(range(1, epochs + 1)):
                errors.append(f"{where}: run {i} has epochs {[e['epoch'] for e in run]}")
            for e in run:
                at = f"{where}: run {i} epoch {e['epoch']}"
                if not 0 <= e["hit_rate"] <= 1:
                    errors.append(f"{at}: hit rate {e['hit_rate']}")
                if e["bytes"] != t["dataset_bytes"] or e["gbps"] <= 0:
                    errors.append(f"{at}: read {e['bytes']} bytes of {t['dataset_bytes']}, {e['gbps']} GB/s")
                if t["verify"] and e["verified_bytes"] != e["bytes"]:
                    errors.append(f"{at}: {e['verified_bytes']} bytes checked of {e['bytes']}")
                if sum(e["bytes_by_path"].values()) < e["bytes"]:
                    errors.append(f"{at}: the library routed {sum(e['bytes_by_path'].values())} bytes of {e['bytes']}")
                if expect_au and not 0 < e["au"] <= 1:
                    errors.append(f"{at}: accelerator utilisation {e['au']}")
        for e in p["epochs"]:
            if not 0 <= e["hit_rate_median"] <= 1:
                errors.append(f"{where}: epoch {e['epoch']} hit rate median {e['hit_rate_median']}")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schema", required=True)
    ap.add_argument("--expect-results", type=int)
    ap.add_argument("--expect-skipped", type=int)
    ap.add_argument("--kind")
    ap.add_argument("--stdout-json", action="store_true")
    ap.add_argument("--expect-epochs", type=int)
    ap.add_argument("--expect-au", action="store_true")
    ap.add_argument("--expect-stdout", metavar="REGEX", action="append", default=[],
                    help="the table must match REGEX (may be given more than once)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    out = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {out.returncode}\n{out.stdout}")
    if a.stdout_json:
        try:
            doc = json.loads(out.stdout)
        except ValueError as e:
            sys.exit(f"FAIL: stdout is not one JSON document: {e}\n{out.stdout[:500]}")
    else:
        print(out.stdout)
        path = next(c.split("=", 1)[1] for c in cmd if c.startswith("--json="))
        with open(path) as f:
            doc = json.load(f)
    with open(a.schema) as f:
        schema = json.load(f)
    errors = validate(doc, schema)
    for r in doc.get("results", []):
        where = f"{r.get('job')}/{r.get('policy')}/{r.get('rw')}"
        if r["gbps_median"] <= 0 or r["bytes"] <= 0:
            errors.append(f"{where}: no bytes or no rate")
        if not r["gbps_min"] <= r["gbps_median"] <= r["gbps_max"]:
            errors.append(f"{where}: min/median/max out of order")
        if len(r["runs"]) != r["reps"]:
            errors.append(f"{where}: {len(r['runs'])} runs but reps {r['reps']}")
        if r["engine"] == "hybridio":
            moved = sum(r["counters"]["bytes"].values())
            if moved < r["bytes"]:
                errors.append(f"{where}: the library counted {moved} bytes, the run {r['bytes']}")
    if a.expect_results is not None and len(doc["results"]) != a.expect_results:
        errors.append(f"expected {a.expect_results} results, got {len(doc['results'])}")
    if a.expect_skipped is not None and len(doc["skipped"]) != a.expect_skipped:
        errors.append(f"expected {a.expect_skipped} skipped rows, got {len(doc['skipped'])}")
    if a.kind and doc.get("kind") != a.kind:
        errors.append(f"kind {doc.get('kind')}, expected {a.kind}")
    for regex in a.expect_stdout:
        if not re.search(regex, out.stdout, re.DOTALL):
            errors.append(f"stdout does not match {regex!r}")
    if a.kind == "checkpoint" and "checkpoint" not in doc:
        errors.append("no checkpoint object")
    if a.kind == "train":
        errors += check_train(doc, a.expect_epochs, a.expect_au)
    if errors:
        sys.exit("FAIL:\n  " + "\n  ".join(errors[:20]))
    print(f"report OK: {len(doc['results'])} results, {len(doc['skipped'])} skipped, schema {doc['schema']}")


if __name__ == "__main__":
    main()
