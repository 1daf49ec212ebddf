#!/usr/bin/env python3
"""What --emit DIR wrote: one descriptor (fusescan.kernel/1) naming its source
and PTX, a PTX with the kernel's entry point, one output parameter
and a launch shape. --tuned: chosen on a GPU (one chosen tactic in its table,
a finalist);
else the fallback tactic, untuned.
usage: check_emit.py DIR [--tuned]"""
import glob
import json
import os
import sys

d = sys.argv[1]
(path,) = glob.glob(os.path.join(d, "*.json"))
j = json.load(open(path))
assert j["format"] == "fusescan.kernel/1" and j["name"].startswith("fs_") and j["entry"] == "fs_k", j
ptx = open(os.path.join(d, j["ptx"])).read()
assert ".entry fs_k" in ptx and ".target sm_" in ptx, ptx[:300]
assert "fs_k(" in open(os.path.join(d, j["source"])).read()
assert [p["role"] for p in j["params"]].count("output") == 1 and j["launch"]["block"][0] > 0, j
if "--tuned" in sys.argv:
    assert j["tuned_on"] and sum(t["chosen"] for t in j["tactics"]) == 1, j
    assert all(t["final"] for t in j["tactics"] if t["chosen"]), j
else:
    assert j["tactic"]["name"] == "v1 t256 r1" and not j["tuned_on"] and not j["tactics"], j
