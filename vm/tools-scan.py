#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# vm/tools-scan.py FILE...: the programs that shell scripts (and the
# recipes of Makefiles) run, found by parsing them (shfmt --to-json), one
# "COMMAND FILE:LINE" line per call.  Used by vm/tools-check.sh.
#
# A command is the first word of a simple command when that word is a
# literal (not "$VAR", "${arr[@]}" or a path into the repository); an
# absolute path counts as its base name.  Wrappers are looked through:
# nice, timeout, xargs, env, exec, command (not -v), setsid, nohup, chroot
# ROOT, flock FD, perf record ... --, and sh/bash -c 'LITERAL' is parsed
# in turn.  Functions defined in any of the files and "FUNC" lines of the
# output let the caller leave them out; shell builtins are the caller's to
# filter (bash knows them: compgen -b -k).  Not seen: a command held in a
# variable or an array ("${KMAKE[@]}"), text that another program runs
# (awk's system(), gdb scripts, the command of vm/run, which runs in the
# VM), and Makefile variables other than $(MAKE) and $(CC).
import json
import os
import re
import subprocess
import sys


def lit(word):
    """The literal value of a shfmt Word, or None if it expands anything."""
    out = []
    for p in word.get("Parts", []):
        t = p.get("Type")
        if t == "Lit":
            out.append(p["Value"])
        elif t == "SglQuoted":
            out.append(p["Value"])
        elif t == "DblQuoted":
            for q in p.get("Parts", []):
                if q.get("Type") != "Lit":
                    return None
                out.append(q["Value"])
        else:
            return None
    return "".join(out)


def chain(words):
    """The commands that one simple command runs: the first word, and the
    command each wrapper runs.  Yields (name, index of the word)."""
    i = 0
    while i < len(words):
        w = words[i]
        if w is None or w == "":
            return
        if "=" in w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
            return  # an assignment word here is env's business
        if "/" in w:
            if not w.startswith("/"):
                return  # ./x, scripts/x, $ROOT/...: the repository's own
            w = os.path.basename(w)
        yield w, i
        i += 1
        rest = words[i:]

        def opt_arg(flags_with_arg, flags=()):
            nonlocal i
            while i < len(words):
                a = words[i]
                if a is None:
                    return False
                if a == "--":
                    i += 1
                    return True
                if a in flags_with_arg:
                    i += 2
                elif any(a.startswith(f) and len(a) > len(f) for f in flags_with_arg if len(f) == 2):
                    i += 1  # attached: -I{}, -P2
                elif a.startswith("-") and a != "-":
                    i += 1
                else:
                    return True
            return True

        if w in ("exec", "builtin", "nohup", "setsid", "time", "sudo"):
            opt_arg(("-a",))
        elif w == "command":
            if rest and rest[0] in ("-v", "-V"):
                return  # a probe, not a call
            opt_arg(())
        elif w == "nice":
            opt_arg(("-n",))
        elif w == "timeout":
            opt_arg(("-k", "-s"))
            i += 1  # the duration
        elif w == "env":
            opt_arg(("-u", "-C", "-S"))
            while i < len(words) and words[i] and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]):
                i += 1
        elif w == "xargs":
            opt_arg(("-P", "-n", "-I", "-L", "-s", "-d", "-a", "-E", "-i"))
            if i >= len(words):
                yield "echo", i - 1
                return
        elif w == "chroot":
            opt_arg(())
            i += 1  # the new root
        elif w == "flock":
            return  # flock FD
        elif w == "perf":
            if "--" in rest:
                i += rest.index("--") + 1
            else:
                return
        elif w in ("sh", "bash") and "-c" in rest:
            return  # the -c string is parsed by the caller
        else:
            return


def shell_c(words, idx):
    """The literal -c string of sh/bash -c run as words[idx], if any."""
    if idx + 2 < len(words) and words[idx + 1] == "-c":
        return words[idx + 2]
    return None


def walk(node, out, funcs, src, lineoff):
    if isinstance(node, list):
        for x in node:
            walk(x, out, funcs, src, lineoff)
        return
    if not isinstance(node, dict):
        return
    t = node.get("Type")
    if t == "FuncDecl":
        funcs.add(node["Name"]["Value"])
    if t == "CallExpr" and node.get("Args"):
        words = [lit(w) for w in node["Args"]]
        line = node["Pos"]["Line"] + lineoff
        for name, idx in chain(words):
            out.append((name, "%s:%d" % (src, line)))
            s = shell_c(words, idx) if name in ("sh", "bash") else None
            if s is not None:
                parse(s, out, funcs, src, line - 1)
    for k, v in node.items():
        if k not in ("Pos", "End"):
            walk(v, out, funcs, src, lineoff)


def parse(text, out, funcs, src, lineoff=0):
    r = subprocess.run(["shfmt", "--to-json", "-ln", "bash"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.stderr.write("tools-scan: %s: shfmt cannot parse it: %s\n" % (src, r.stderr.decode().strip()))
        sys.exit(2)
    walk(json.loads(r.stdout), out, funcs, src, lineoff)


def make_recipes(text):
    """A Makefile's recipe lines as shell, at their own line numbers."""
    lines = text.split("\n")
    res = [""] * len(lines)
    n = 0
    while n < len(lines):
        if not lines[n].startswith("\t"):
            # A continued line of a rule or an assignment is no recipe.
            while lines[n].endswith("\\") and n + 1 < len(lines):
                n += 1
        elif lines[n].startswith("\t"):
            start = n
            cmd = lines[n][1:]
            while cmd.endswith("\\") and n + 1 < len(lines):
                n += 1
                cmd = cmd[:-1] + " " + lines[n].lstrip("\t")
            cmd = cmd.lstrip("@+- ")
            cmd = cmd.replace("$$", "\0")
            cmd = cmd.replace("$(MAKE)", "make").replace("$(CC)", "cc")
            cmd = re.sub(r"\$[({]([^)}]*)[)}]", lambda m: "$MK_" + re.sub(r"\W", "_", m.group(1)), cmd)
            cmd = re.sub(r"\$[@<^*?+|%]", "$MK_auto", cmd)
            res[start] = cmd.replace("\0", "$")
        n += 1
    return "\n".join(res)


def main():
    out, funcs = [], set()
    for f in sys.argv[1:]:
        with open(f) as fh:
            text = fh.read()
        if os.path.basename(f) == "Makefile":
            text = make_recipes(text)
        parse(text, out, funcs, f)
    for name in sorted(funcs):
        print("FUNC", name)
    for name, where in out:
        print(name, where)


main()
