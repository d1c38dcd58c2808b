# Replays every walkthrough fixture of a fixture directory through the seed's Solution.java
# (see README.md): python3 replay.py FIXTURE_DIR JAVA_CLASS_DIR
import json, glob, subprocess, sys
def hexkey(k): return ",".join("%x" % ord(c) for c in k) if k else "-"
def java_expect(o):
    o = {k: v for k, v in o.items()}
    kind = o["outcome"]
    if kind == "decision": return "decision %s %s %s" % (str(o["allowed"]).lower(), o["whole_tokens"], o["retry_after_nanos"])
    if kind == "evicted": return "evicted %s" % o["removed"]
    if kind == "replaced": return "replaced"
    if kind == "key_count": return "key_count %s" % o["keys"]
    e = o["error"]
    return {"invalid_key": "error IllegalArgumentException: key or impossible cost",
            "invalid_cost": "error IllegalArgumentException: key or impossible cost",
            "time_went_backwards": "error IllegalArgumentException: non-monotonic time",
            "key_capacity_reached": "error IllegalStateException: key capacity reached",
            "stale_policy_version": "error IllegalStateException: stale policy version"}[e]
total = agree = 0
for path in sorted(glob.glob(sys.argv[1] + "/walkthroughs/*.json")):
    f = json.load(open(path))
    p = f["policy"]
    lines = ["new %s %s %s %s" % (p["version"], p["capacity"], p["tokens_per_second"], f["max_keys"])]
    expect = ["ok"]
    fwcap = (f.get("baselines") or {}).get("fixed_window")
    if fwcap:
        lines.append("fw %s" % fwcap["capacity"]); expect.append("ok")
    for s in f["steps"]:
        op = s["op"]
        n = int(s["contenders"]["threads"]) if "contenders" in s else 1
        for i in range(n):
            if op["op"] == "allow": lines.append("allow %s %s %s" % (hexkey(op["key"]), op["cost"], op["now"]))
            elif op["op"] == "evict_full": lines.append("evict %s" % op["now"])
            elif op["op"] == "replace_policy":
                nx = op["next"]; lines.append("replace %s %s %s %s %s" % (nx["version"], nx["capacity"], nx["tokens_per_second"], op["expected_version"], op["now"]))
            else: lines.append("count")
            expect.append(java_expect(s["outcome"]) if i == n - 1 else None)
        if fwcap and "beside" in s:
            lines.append("fwallow %s" % op["now"]); expect.append(s["beside"]["fixed_window"])
    got = subprocess.run(["java", "-cp", sys.argv[2], "Replay"], input="\n".join(lines) + "\n", capture_output=True, text=True).stdout.splitlines()
    bad = [(i, lines[i], e, g) for i, (e, g) in enumerate(zip(expect, got)) if e is not None and e != g]
    n = sum(1 for e in expect if e is not None)
    total += n; agree += n - len(bad)
    # contended counts
    print(path.split("/")[-1], "ops", len(lines), "checked", n, "mismatches", len(bad))
    for b in bad[:5]: print("   ", b)
print("total checked", total, "agree", agree)
sys.exit(0 if agree == total else 1)
