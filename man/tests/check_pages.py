#!/usr/bin/env python3
"""Checks the generated man pages (build/man/man{1,3,5}).

  check_pages.py --pages DIR render
      every page renders with groff's man macros without a single warning
      (groff -man -ww -z): exit 1 naming the page and the warning otherwise.
  check_pages.py --pages DIR complete --hybridio BIN --header hybridio.h
      every command `hybridio --help` lists has its page hybridio-COMMAND(1);
      every option `hybridio COMMAND --help` lists appears on that page;
      every setting `hybridio config` lists appears on hybridio-config(5) with
      its variable and its config-file key; every HIO_API function of the
      header has its page NAME(3) and a line in libhybridio(3).

The expected names come from the built command and the header, not from the
generator, so a page that lost a table (or a table that lost its page) is
caught.  The pages are read as rendered text, where \\- has become -.
"""
import argparse
import glob
import os
import re
import subprocess
import sys


def pages(root):
    found = sorted(glob.glob(os.path.join(root, "man[135]", "*.[135]")))
    if not found:
        sys.exit(f"no pages under {root}")
    return found


def render_text(path):
    """The page as plain ASCII, on lines long enough that nothing is broken or hyphenated."""
    out = subprocess.run(["groff", "-man", "-Tascii", "-P-c", "-P-b", "-P-u", "-rLL=2000n", "-rHY=0", path],
                         capture_output=True, text=True, check=True).stdout
    return out


def check_render(root):
    failures = 0
    for page in pages(root):
        r = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True)
        if r.returncode != 0 or r.stderr.strip():
            print(f"FAIL {page}: groff exit {r.returncode}\n{r.stderr}", end="")
            failures += 1
    count = len(pages(root))
    print(f"{count - failures}/{count} pages render without warnings")
    return 1 if failures else 0


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def check_complete(root, hybridio, header):
    missing = []
    # Commands, from `hybridio --help`'s command list.
    top = run([hybridio, "--help"])
    commands = re.findall(r"^  ([a-z][a-z-]*)\s{2,}", top.split("commands:", 1)[1], re.M)
    if not commands:
        sys.exit("no commands in `hybridio --help`")
    for command in commands:
        page = os.path.join(root, "man1", f"hybridio-{command}.1")
        if not os.path.exists(page):
            missing.append(f"hybridio {command}: no page {page}")
            continue
        text = render_text(page)
        help_text = run([hybridio, command, "--help"])
        options = re.findall(r"^  --([a-z0-9][a-z0-9-]*)", help_text, re.M)
        for option in options:
            if not re.search(rf"--{re.escape(option)}(?![a-z0-9-])", text):
                missing.append(f"hybridio {command} --{option}: not on {page}")
        print(f"hybridio {command}: {len(options)} options checked on {os.path.basename(page)}")
    if not os.path.exists(os.path.join(root, "man1", "hybridio.1")):
        missing.append("no page hybridio(1)")

    # Settings, from `hybridio config`: every variable, and every file key
    # (the variable without HYBRIDIO_, in lower case; HYBRIDIO_CONFIG names the file).
    variables = re.findall(r"^  (HYBRIDIO_[A-Z0-9_]+)=", run([hybridio, "config"]), re.M)
    if len(variables) < 2:
        sys.exit("no settings in `hybridio config`")
    page5 = os.path.join(root, "man5", "hybridio-config.5")
    text5 = render_text(page5)
    for variable in variables:
        if not re.search(rf"\b{variable}\b", text5):
            missing.append(f"{variable}: not on {page5}")
        key = variable[len("HYBRIDIO_"):].lower()
        if variable != "HYBRIDIO_CONFIG" and f"(file key {key})" not in text5:
            missing.append(f"file key {key}: not on {page5}")
    print(f"{len(variables)} settings checked on hybridio-config.5")

    # Functions: every HIO_API declaration of the header.
    with open(header) as f:
        source = f.read()
    functions = re.findall(r"^HIO_API\s[^;(]*?\b(hio_\w+)\s*\(", source, re.M)
    if not functions:
        sys.exit(f"no HIO_API functions in {header}")
    index = render_text(os.path.join(root, "man3", "libhybridio.3"))
    for name in functions:
        page = os.path.join(root, "man3", f"{name}.3")
        if not os.path.exists(page):
            missing.append(f"{name}: no page {page}")
            continue
        text = render_text(page)
        if not re.search(rf"^NAME\n\s+{name} - \S", text, re.M):
            missing.append(f"{name}: {page} has no NAME line for it")
        if not re.search(rf"\b{name}\(", text.split("SYNOPSIS", 1)[-1]):
            missing.append(f"{name}: {page} has no SYNOPSIS for it")
        if not re.search(rf"\b{name}\(3\)", index):
            missing.append(f"{name}: not listed in libhybridio(3)")
    print(f"{len(functions)} HIO_API functions checked in man3")

    for m in missing:
        print("MISSING", m)
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", required=True)
    sub = ap.add_subparsers(dest="check", required=True)
    sub.add_parser("render")
    c = sub.add_parser("complete")
    c.add_argument("--hybridio", required=True)
    c.add_argument("--header", required=True)
    a = ap.parse_args()
    if a.check == "render":
        return check_render(a.pages)
    return check_complete(a.pages, a.hybridio, a.header)


if __name__ == "__main__":
    sys.exit(main())
