#!/usr/bin/env python3
"""Every example in the docs is the real thing: run by tests/cli/run.

  doc_examples.py BPFSBX TMPDIR FILE...

YAML: every fenced ```yaml block of a Markdown file, and every ``` block of
a man page source (docs/man/*.scd) that follows a "; policy" comment line,
is a policy and must pass `bpfsbx policy check`. A fence info string (or
the scdoc comment) can say otherwise:
  ```yaml fragment      a part of a policy: checked inside
                        "version: 1 / extends: agent-default"
  ```yaml not-a-policy  another YAML file (the reason follows on the line)
Shell: in ```sh blocks (Markdown) and the ``` blocks of the man pages,
every `bpfsbx CMD ...` line must name a command and only options that
`bpfsbx help CMD` lists; the cheap ones that change nothing outside a
scratch project (init, policy, help, version) are run there and must
succeed. A ```sh norun block is only checked, never run.
Prints one line per problem; exits 1 if there was any.
"""
import os
import re
import shlex
import subprocess
import sys

B, TMP = sys.argv[1], sys.argv[2]
FILES = sys.argv[3:]
problems = []
counts = {"policy": 0, "fragment": 0, "skipped": 0, "sh-checked": 0, "sh-run": 0}
env = dict(os.environ, BPFSBX_POLICY_DIR=os.path.join(os.getcwd(), "policy/shipped"))
project = os.path.join(TMP, "docproject")
os.makedirs(project, exist_ok=True)


def blocks(path):
    """(line, info, text) of each fenced block"""
    lines = open(path, encoding="utf-8").read().split("\n")
    scd = path.endswith(".scd")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        info = m.group(1).strip()
        if scd:
            prev = lines[i - 1] if i else ""
            c = re.match(r"^; (policy(?: fragment)?)\b", prev)
            info = ("yaml" + (" fragment" if "fragment" in c.group(1) else "")) if c else "sh"
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        yield i + 1, info, "\n".join(lines[i + 1:j]) + "\n"
        i = j + 1


def check_policy(where, text, fragment):
    p = os.path.join(TMP, "example.yaml")
    if fragment:
        text = "version: 1\nextends: agent-default\n" + text
    with open(p, "w") as f:
        f.write(text)
    r = subprocess.run([B, "policy", "check", p, "--project", project, "--home", TMP],
                       capture_output=True, text=True, env=env)
    out = (r.stdout + r.stderr).strip()
    if r.returncode != 0 or "warning" in out:
        problems.append(f"{where}: policy check: {out}")


def options_of(cmd, cache={}):
    if cmd not in cache:
        r = subprocess.run([B, "help", cmd], capture_output=True, text=True)
        if r.returncode != 0:
            cache[cmd] = None
        else:
            opts = r.stdout.split("\noptions:\n", 1)[-1]
            cache[cmd] = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", opts))
    return cache[cmd]


SAFE = {"init", "policy", "help", "version", "--version"}


def check_sh(where, text, run):
    for n, line in enumerate(text.split("\n")):
        line = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        line = re.sub(r"^(sudo|\$)\s+", "", line)
        if not line.startswith("bpfsbx ") or any(c in line for c in "|;&<>$`"):
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        at = f"{where}+{n}: {line}"
        cmd = words[1]
        counts["sh-checked"] += 1
        if cmd in ("help", "version", "--version", "--help"):
            known = {"--help", "-h"}
        else:
            known = options_of(cmd)
            if known is None:
                problems.append(f"{at}: no such command")
                continue
        for w in words[2:]:
            if w == "--":
                break
            if w.startswith("-") and len(w) > 1 and w.split("=")[0] not in known:
                problems.append(f"{at}: {cmd} has no option {w}")
        if run and cmd in SAFE:
            words = [B] + words[1:]
            if cmd == "init":	# into the scratch project, whatever the doc's DIR
                words = [B, "init", project] + [w for w in words[2:] if w.startswith("-")]
            r = subprocess.run(words, cwd=project, capture_output=True, text=True, env=env,
                               timeout=60)
            counts["sh-run"] += 1
            if r.returncode != 0:
                problems.append(f"{at}: exit {r.returncode}: {(r.stdout + r.stderr).strip()[:300]}")


for path in FILES:
    for line, info, text in blocks(path):
        where = f"{path}:{line}"
        words = info.split()
        lang = words[0] if words else ""
        if lang == "yaml":
            if any(w.startswith("not-a-policy") for w in words):
                counts["skipped"] += 1
            else:
                frag = "fragment" in words
                counts["fragment" if frag else "policy"] += 1
                check_policy(where, text, frag)
        elif lang in ("sh", "bash", "") and (lang or path.endswith(".scd")):
            check_sh(where, text, "norun" not in words)

for p in problems:
    print(p)
print("doc examples: %(policy)d policies, %(fragment)d fragments checked, %(skipped)d other YAML; "
      "%(sh-checked)d bpfsbx command lines checked, %(sh-run)d run" % counts)
sys.exit(1 if problems else 0)
