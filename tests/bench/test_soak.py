"""Quick checks of bench.soak: its parsing helpers, a 3-second soak of the
real engine on 9x9 with a small tree cap, and an engine that refuses
lz-analyze."""

from __future__ import annotations

import os
import re
import sys
import textwrap

from bench import soak


def test_helpers():
    line = ("info move D4 visits 120 winrate 5234 prior 1200 lcb 5100 order 0 pv D4 Q16 "
            "info move Q16 visits 7 winrate 5000 prior 1000 lcb 4000 order 1 pv Q16")
    assert soak.info_visits(line) == 127
    assert soak.info_visits("= ") is None
    assert soak.opening(19) == ["play B Q16", "play W D4", "play B Q4", "play W D16"]
    assert soak.opening(9) == ["play B G7", "play W C3", "play B G3", "play W C7"]
    assert soak.opening(3) == []
    assert soak.tree_cap("x\ntree cap 1048576 bytes (0.00 GiB), c_explore 0.2") == 1 << 20
    assert soak.tree_cap("no cap here") is None
    status = soak.proc_status(os.getpid())
    assert status["VmRSS"] > 0 and status["VmHWM"] >= status["VmRSS"]
    assert soak.split_command("python -m engine.gtp")[0] == sys.executable


def test_three_second_soak_of_the_engine(capsys):
    code = soak.main(["--seconds", "3", "--size", "9", "--max-memory", "1M",
                      "--sample", "1", "--interval", "20", "--settle", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("engine: ") and lines[0].endswith("--quiet --max-memory 1M")
    assert re.match(r"started delayed-go \(pid \d+\) in [\d.]+s$", lines[1])
    assert lines[2] == "board 9x9, opening: G7 C3 G3 C7"
    m = re.match(r"baseline RSS ([\d.]+) MiB; bound ([\d.]+) MiB = baseline \+ tree cap "
                 r"([\d.]+) MiB \(pools of 4519 nodes x 40 B and 36157 edges x 24 B, "
                 r"not found mapped\) "
                 r"\+ slack 64.0 MiB$", lines[3])
    assert m, lines[3]
    baseline, bound, tree = map(float, m.groups())
    assert tree == round((4519 * 40 + 36157 * 24) / 2**20, 1) == 1.0
    assert abs(bound - (baseline + tree + 64)) < 0.2
    assert lines[4] == "running 'lz-analyze B 20' for 3s, a sample every 1s"
    assert lines[5].split() == ["t_s", "rss_mib", "d_base", "pool_mib", "visits", "visits/s",
                                "lines"]
    rows = []
    for line in lines[6:]:
        cells = line.split()
        if len(cells) != 7 or not re.fullmatch(r"[\d.]+", cells[0]):
            break
        rows.append(cells)
    assert len(rows) >= 3, out                       # samples at 1, 2 and 3 s
    visits = [int(r[4]) for r in rows]
    assert visits == sorted(visits) and visits[-1] > 0
    rest = "\n".join(lines[6 + len(rows):])
    assert "analysis stopped with a blank line in" in rest
    assert "engine still answers name: 'delayed-go'; quit, exit status 0" in rest
    assert re.search(r"^max RSS [\d.]+ MiB at t=\d+s \(baseline [\d.]+ MiB, \+-?[\d.]+ MiB\); "
                     r"peak VmHWM [\d.]+ MiB$", rest, re.M), rest
    assert re.search(r"^RSS growth after 1s: [+-][\d.]+ MiB", rest, re.M), rest
    m = re.search(r"^total visits (\d+) in \d+s \(\d+/s\), (\d+) info lines$", rest, re.M)
    assert m and int(m.group(1)) >= visits[-1] and int(m.group(2)) > 0, rest
    assert re.search(r"^RSS bound [\d.]+ MiB: within$", rest, re.M), rest


STUB = textwrap.dedent('''
    import sys
    for line in sys.stdin:
        name = line.split()[0] if line.split() else ""
        if name == "lz-analyze":
            sys.stdout.write("? unknown command\\n\\n")
        elif name == "quit":
            sys.stdout.write("=\\n\\n"); sys.stdout.flush(); break
        elif name == "gomill-describe_engine":
            sys.stdout.write("= stub\\ntree cap 10000 nodes\\n\\n")
        elif name:
            sys.stdout.write("= stub\\n\\n" if name == "name" else "=\\n\\n")
        sys.stdout.flush()
''')


def test_an_engine_without_lz_analyze_fails_with_status_2(tmp_path, capsys):
    stub = tmp_path / "stub.py"
    stub.write_text(STUB)
    code = soak.main(["--seconds", "1", "--size", "9", "--engine", f"python {stub}"])
    out = capsys.readouterr().out
    assert code == 2, out
    assert "error: engine failed: unknown command" in out
    assert soak.main(["--seconds", "1", "--engine", str(tmp_path / "no-such-engine")]) == 2
