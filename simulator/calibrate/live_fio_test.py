#!/usr/bin/env python3
"""live_fio_test: the calibration pipeline on this machine, live: fio_to_bench_json.py runs small
fio jobs (4 block sizes x buffered/direct x write/read, 16 MiB each: 256 MiB of I/O), writes a
hybridio-bench/1 JSON, and `hybridio-sim calibrate` fits and predicts from it. Too small and too
noisy to judge accuracy (see the calibration_this_machine scenario for that); it checks the
pipeline: valid JSON, every point present, positive fitted parameters, a prediction table.
Exit 77 (skipped, with the reason) when fio is missing.
Usage: live_fio_test.py PATH/TO/hybridio-sim WORKDIR"""
import json
import os
import re
import shutil
import subprocess
import sys

sim, work = sys.argv[1], sys.argv[2]
if shutil.which("fio") is None:
    print("SKIP: fio is not installed (apt-get install fio)")
    sys.exit(77)
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "live-bench.json")
here = os.path.dirname(os.path.abspath(__file__))
subprocess.run([sys.executable, os.path.join(here, "fio_to_bench_json.py"), "--dir", work, "--size", "16M",
                "--reps", "1", "--block-sizes", "4k,64k,1m,16m", "--out", out], check=True, timeout=90)
with open(out) as f:
    doc = json.load(f)
ok = doc["schema"] == "hybridio-bench/1" and len(doc["results"]) == 16
ok &= all(r["gbps_median"] > 0 for r in doc["results"])
print("bench JSON:", "ok" if ok else "BAD")
p = subprocess.run([sim, "calibrate", "--bench", out, "--fit-sizes", "4KiB,1MiB,16MiB", "--max-error", "1e9"],
                   capture_output=True, text=True, timeout=60)
print(p.stdout, p.stderr)
m = re.search(r"direct write: ([\d.]+) us/request \+ ([\d.]+) GB/s", p.stdout)
ok &= p.returncode == 0 and m is not None and float(m.group(2)) > 0
ok &= "prediction" in p.stdout and "64.00 KiB" in p.stdout
print("calibrate pipeline:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
