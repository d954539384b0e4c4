#!/usr/bin/env python3
"""cli_test: hybridio-sim's command line end to end: --help, the default run and its CSV/JSON,
errors that name the field and the line, progress kept off non-terminals, sweep (local, GNU
parallel job list, Slurm array) and merge. Usage: cli_test.py PATH/TO/hybridio-sim"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SIM = sys.argv[1]
failures = []


def run(*args, timeout=60):
    return subprocess.run([SIM, *args], capture_output=True, text=True, timeout=timeout)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# --help explains every parameter, the subcommands and the policies.
r = run("--help")
check(r.returncode == 0, "--help exits 0")
for word in ("sweep", "merge", "calibrate", "hybrid", "dontcache", "async", "--platform", "--csv", "--json",
             "cluster/nodes", "fs/stripe-count", "pagecache/dirty-ratio", "policy/write-threshold",
             "workload/preset", "training/node-mtbf", "sim/chunk-bytes"):
    check(word in r.stdout, f"--help mentions {word}")

# The default run: a readable comparison, nothing on stderr (not a terminal).  Its time is
# printed, not judged: a loaded machine decides it.
t0 = time.time()
r = run()
print(f"# default run: {time.time() - t0:.1f} s")
check(r.returncode == 0, "default run exits 0")
for pol in ("buffered", "direct", "dontcache", "hybrid", "async"):
    check(f"\n  {pol} " in r.stdout, f"default run reports {pol}")
check("goodput" in r.stdout and "Young" in r.stdout and "Daly" in r.stdout, "summary has goodput and Young/Daly")
check(r.stderr == "", f"no progress or logs on a non-terminal stderr ({r.stderr[:80]!r})")

# Machine output: JSON alone on stdout, CSV with a header and one row per policy.
r = run("--cfg=policy/list:buffered,hybrid", "--json", "-")
doc = json.loads(r.stdout)
check(doc["schema"] == "hybridio-sim/1", "JSON has a schema version")
check([x["policy"] for x in doc["results"]] == ["buffered", "hybrid"], "JSON has one result per policy")
check(doc["config"]["policy/list"] == "buffered,hybrid", "JSON echoes every parameter")
check(all(x["write_s"] > 0 and 0 < x["training"]["goodput"] <= 1 for x in doc["results"]), "JSON values are sane")
r = run("--cfg=policy/list:buffered,direct", "--csv", "-", "--tags", "fs/stripe-count")
rows = list(csv.reader(io.StringIO(r.stdout)))
check(len(rows) == 3 and rows[0][0] == "fs/stripe-count" and rows[1][0] == "4", "CSV: header, tag column, 2 rows")
check(len({len(x) for x in rows}) == 1, "CSV rows have as many fields as the header")

tmp = tempfile.mkdtemp(prefix="hio-sim-cli-")
try:
    # Description files: errors name the field and the line.
    bad = os.path.join(tmp, "bad.conf")
    with open(bad, "w") as f:
        f.write("# a cluster\ncluster/nodes = 16\nfs/ost-bandwith = 4GBps\n")
    r = run("--platform", bad)
    check(r.returncode == 2, "unknown field: exit status 2")
    check("line 3" in r.stderr and "fs/ost-bandwith" in r.stderr, f"unknown field named with its line: {r.stderr.strip()}")
    with open(bad, "w") as f:
        f.write("cluster/nodes = 16\n\nfs/stripe-size = 1 parsec\n")
    r = run("--platform", bad)
    check(r.returncode == 2 and "line 3" in r.stderr and "fs/stripe-size" in r.stderr,
          f"bad value named with its line: {r.stderr.strip()}")
    with open(bad, "w") as f:
        f.write("fs/oss = 2\nfs/osts-per-oss = 2\nfs/stripe-count = 8\n")
    r = run("--platform", bad)
    check(r.returncode == 2 and "fs/stripe-count" in r.stderr and "line 3" in r.stderr,
          f"cross-field error names field and line: {r.stderr.strip()}")
    check(r.stderr.count("\n") == 1, "one clear error line")
    good = os.path.join(tmp, "good.conf")
    with open(good, "w") as f:
        f.write("fs/stripe-count = 2   # narrow stripes\npolicy/list = direct\n")
    r = run("--platform", good, "--cfg=fs/stripe-count:8", "--json", "-")
    doc = json.loads(r.stdout)
    check(doc["config"]["fs/stripe-count"] == "8" and doc["config"]["policy/list"] == "direct",
          "--cfg wins over the file, the file sets the rest")
    r = run("--cfg=fs/stripe-count:abc")
    check(r.returncode == 2 and "fs/stripe-count" in r.stderr and "--cfg" in r.stderr,
          f"bad --cfg value named: {r.stderr.strip()}")
    r = run("--frobnicate")
    check(r.returncode == 2 and "--frobnicate" in r.stderr, "unknown argument is an error")
    r = run("--cfg=workload/preset:llama3-405b", "--cfg=cluster/nodes:8", "--cfg=workload/dp:1")
    check(r.returncode == 2 and "needs 64 nodes" in r.stderr, f"layout larger than the cluster: {r.stderr.strip()}")

    # Sweep, locally in parallel, then merged.
    out = os.path.join(tmp, "sweep")
    r = run("sweep", "--grid", "fs/stripe-count=1,4", "--grid", "policy/list=buffered,direct", "--out", out,
            "--jobs", "2", "--cfg=workload/preset:llama3-8b", timeout=120)
    check(r.returncode == 0, f"sweep runs ({r.stderr.strip()[:200]})")
    with open(os.path.join(out, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 4, "sweep merged 4 runs")
    check({(x["fs/stripe-count"], x["policy"]) for x in rows} == {("1", "buffered"), ("1", "direct"), ("4", "buffered"), ("4", "direct")},
          "each run tagged with its grid values")
    with open(os.path.join(out, "results.json")) as f:
        check(len(json.load(f)["runs"]) == 4, "merged JSON has every run")
    # Job list for GNU parallel and a Slurm array; run the list and merge.
    out2 = os.path.join(tmp, "sweep2")
    r = run("sweep", "--mode", "gnu-parallel", "--grid", "cluster/nodes=1,2,4", "--out", out2,
            "--cfg=workload/preset:llama3-8b", "--cfg=policy/list:hybrid")
    with open(os.path.join(out2, "jobs.txt")) as f:
        jobs = f.read().splitlines()
    check(r.returncode == 0 and len(jobs) == 3, "gnu-parallel mode writes one job per run")
    with open(os.path.join(out2, "slurm.sh")) as f:
        slurm = f.read()
    check("#SBATCH --array=1-3" in slurm and "SLURM_ARRAY_TASK_ID" in slurm, "Slurm array script covers every job")
    check(not os.path.exists(os.path.join(out2, "results.csv")), "gnu-parallel mode runs nothing itself")
    if shutil.which("parallel"):
        p = subprocess.run(["parallel", "--will-cite", "--jobs", "2"], input="\n".join(jobs) + "\n", text=True,
                           capture_output=True, timeout=120)
        check(p.returncode == 0, "GNU parallel runs the job list")
    else:
        print("note: GNU parallel not installed (apt-get install parallel); running jobs.txt with sh")
        for j in jobs:
            subprocess.run(["sh", "-c", j], check=True, timeout=60)
    r = run("merge", out2)
    with open(os.path.join(out2, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    check(r.returncode == 0 and [x["cluster/nodes"] for x in rows] == ["1", "2", "4"], "merge joins the job list's runs")
    r = run("merge", tmp)
    check(r.returncode == 2 and "runs/" in r.stderr, "merge of a directory without runs is an error")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
