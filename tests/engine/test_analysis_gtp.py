"""The analysis and GUI commands end to end: ``python -m engine.gtp`` as a
subprocess, driven the way Sabaki, Lizzie, GoGui and KGS drive it.

Every analysis line is read with a parser written here from Sabaki's rules
(docs design.md, section 6).  The last test drives the engine through npm's
``@sabaki/gtp`` (skipped without node/npm or without network access to the
registry).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


@pytest.fixture(scope="module", autouse=True)
def warm_kernels() -> None:
    """Fill numba's on-disk cache here (the subprocesses share it through
    NUMBA_CACHE_DIR), so that no engine below spends its first answer
    compiling."""
    from engine.gtp import parse_args
    from engine.player import Player

    Player(parse_args(["--quiet"])).warm_up()


# ---------------------------------------------------------------------------
# Sabaki's reading of an analysis line


VERTEX = r"(?:pass|[A-Za-z]\d+)"
PV_RUN = re.compile(rf"{VERTEX}(?:\s+{VERTEX})*$")


def sabaki_parse(line: str, size: int) -> tuple[list[dict], list[float] | None]:
    """Parse one ``info ...`` line as Sabaki does.

    The ``ownership`` tail (size*size floats, row-major from A19) is cut off
    first; the rest is split on ``info``; in each chunk the PV is the
    trailing run of vertices (cut at the first pass) after ``pv``; the other
    tokens are key/value pairs in any order; a candidate whose move is
    ``pass`` is dropped; a winrate containing ``.`` is a 0..1 fraction,
    otherwise an integer in 1/10000.  Raises AssertionError where Sabaki
    would misread the line.
    """
    assert line.startswith("info "), line
    ownership = None
    m = re.search(r"ownership\s+(.+)", line)
    if m:
        ownership = [float(x) for x in m.group(1).split()]
        assert len(ownership) == size * size, len(ownership)
        line = line[:m.start()]
    chunks = [c.strip() for c in re.split(r"\s*info\s+", line)[1:]]
    assert chunks
    moves = []
    for chunk in chunks:
        pv_match = PV_RUN.search(chunk)
        assert pv_match, chunk
        head = chunk[:pv_match.start()].split()
        assert head and head[-1] == "pv", chunk            # the run follows "pv"
        tokens = head[:-1]
        assert len(tokens) % 2 == 0, chunk
        pairs = dict(zip(tokens[::2], tokens[1::2]))
        assert len(pairs) == len(tokens) // 2, f"repeated key in {chunk}"
        pv = pv_match.group(0).split()
        if "pass" in pv:
            pv = pv[:pv.index("pass")]
        for key in ("move", "visits", "winrate"):
            assert key in pairs, (key, chunk)
        move = pairs["move"]
        if move == "pass":
            continue
        assert re.fullmatch(r"[A-HJ-Z]\d+", move) and int(move[1:]) <= size, move
        assert LETTERS.index(move[0]) < size
        rate = pairs["winrate"]
        winrate = float(rate) if "." in rate else int(rate) / 10000
        assert 0 <= winrate <= 1, rate
        entry = {"move": move, "visits": int(pairs["visits"]), "winrate": winrate, "pv": pv,
                 "keys": set(pairs)}
        if "scoreLead" in pairs:
            entry["scoreLead"] = float(pairs["scoreLead"])
        moves.append(entry)
    return moves, ownership


def test_sabaki_parser_on_known_lines() -> None:
    moves, own = sabaki_parse(
        "info move D4 visits 120 winrate 5234 prior 1200 lcb 5100 order 0 pv D4 Q16 pass C3 "
        "info move pass visits 3 winrate 100 pv pass "
        "info move Q16 visits 7 winrate 0.5 scoreLead -1.5 pv Q16", 19)
    assert [m["move"] for m in moves] == ["D4", "Q16"]
    assert moves[0]["winrate"] == 0.5234 and moves[0]["pv"] == ["D4", "Q16"]
    assert moves[1]["scoreLead"] == -1.5 and own is None
    with pytest.raises(AssertionError):
        sabaki_parse("info move D4 visits 1 winrate 5000 order pv D4", 19)


# ---------------------------------------------------------------------------
# the engine as a subprocess


class Engine:
    """``python -m engine.gtp`` with its stdout (and stderr) read by threads."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.gtp", *args], cwd=ROOT, text=True, bufsize=1,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put),
                         daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append),
                         daemon=True).start()

    @staticmethod
    def _pump(stream, sink) -> None:
        for line in stream:
            sink(line.rstrip("\n"))
        sink(None)

    def send(self, text: str) -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def line(self, timeout: float = 120) -> str:
        got = self.lines.get(timeout=timeout)
        assert got is not None, "engine closed its output; stderr:\n" + "\n".join(
            s for s in self.stderr if s)
        return got

    def answer(self, command: str, timeout: float = 120) -> str:
        """Send a command and read its whole answer (without the "= ")."""
        self.send(command)
        first = self.line(timeout)
        assert first.startswith("="), f"{command!r}: {first!r}"
        body = [first[1:].lstrip()]
        while (line := self.line(timeout)) != "":
            body.append(line)
        return "\n".join(body).strip("\n")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def engines():
    started: list[Engine] = []

    def start(*args: str) -> Engine:
        e = Engine(*args)
        started.append(e)
        return e

    yield start
    for e in started:
        e.close()


def read_analysis(e: Engine, count: int, size: int) -> list[list[dict]]:
    """After an analysis command: check the "=" head and parse *count* lines."""
    assert e.line() == "="
    parsed = []
    for _ in range(count):
        line = e.line()
        moves, _ = sabaki_parse(line, size)
        parsed.append(moves)
    return parsed


def end_of_analysis(e: Engine) -> list[str]:
    """Info lines still in flight, up to the blank line that ends the answer."""
    rest = []
    while (line := e.line()) != "":
        rest.append(line)
    return rest


def test_lz_analyze_streams_until_the_next_command(engines) -> None:
    e = engines("--rollouts", "1000", "--quiet")
    e.send("lz-analyze B 10")
    parsed = read_analysis(e, 4, 19)
    e.send("name")
    for line in end_of_analysis(e):
        parsed.append(sabaki_parse(line, 19)[0])
    assert e.line() == "= delayed-go" and e.line() == ""
    for moves in parsed:
        assert moves
        visits = [m["visits"] for m in moves]
        assert visits == sorted(visits, reverse=True)
        for m in moves:
            assert {"move", "visits", "winrate", "prior", "lcb", "order", } <= m["keys"]
            assert m["pv"] and m["pv"][0] == m["move"]
    # and the engine goes on as usual
    assert e.answer("play b D4") == ""
    e.send("quit")
    assert e.line() == "=" and e.line() == ""
    assert e.proc.wait(10) == 0


def test_quit_during_analysis_exits_within_two_seconds(engines) -> None:
    e = engines("--rollouts", "1000", "--quiet")
    e.send("lz-analyze B 10")
    read_analysis(e, 2, 19)
    t0 = time.monotonic()
    e.send("quit")
    end_of_analysis(e)
    assert e.line() == "=" and e.line() == ""
    assert e.proc.wait(5) == 0
    assert time.monotonic() - t0 < 2.0


def test_quit_during_a_long_genmove_exits_promptly(engines) -> None:
    e = engines("--rollouts", "100000000", "--quiet")
    assert e.answer("boardsize 9") == ""
    e.send("genmove b")
    time.sleep(1.0)
    t0 = time.monotonic()
    e.send("quit")
    move = e.line()
    assert re.fullmatch(r"= [A-HJ]\d", move), move
    assert e.line() == "" and e.line() == "=" and e.line() == ""
    assert e.proc.wait(5) == 0
    assert time.monotonic() - t0 < 2.0


def test_kata_analyze_with_ownership_and_lz_genmove_analyze(engines) -> None:
    e = engines("--rollouts", "400", "--quiet", "--seed", "3")
    for cmd in ["boardsize 5", "komi 0", *(f"play b C{r}" for r in range(1, 6)),
                *(f"play w D{r}" for r in range(1, 6))]:
        assert e.answer(cmd) == ""
    e.send("kata-analyze W 10 ownership true")
    assert e.line() == "="
    lines = [e.line() for _ in range(3)]
    e.send("name")
    lines += end_of_analysis(e)
    assert e.line() == "= delayed-go" and e.line() == ""
    for line in lines:
        moves, own = sabaki_parse(line, 5)
        assert all("scoreLead" in m for m in moves)
        # KataGo's float winrates (the text, not str(float): 0.000010 is 1e-05)
        assert all(re.fullmatch(r"[01]\.\d{6}", w) for w in re.findall(r" winrate (\S+)", line))
        # white to move: the black side (columns A-C) reads negative
        rows = [own[r * 5:(r + 1) * 5] for r in range(5)]
        assert all(max(row[:3]) < -0.3 and min(row[3:]) > 0.3 for row in rows), rows
    e.send("lz-genmove_analyze b 5")
    assert e.line() == "="
    while (line := e.line()).startswith("info "):
        sabaki_parse(line, 5)
    assert re.fullmatch(r"play (?:[A-E][1-5]|pass|resign)", line), line
    assert e.line() == ""
    board = e.answer("showboard")
    assert board.count("X") + board.count("O") >= 10


def test_the_first_report_waits_for_enough_playouts(engines) -> None:
    """The ownership and score lead of a report are its playouts' mean, so
    one taken as the search starts (the network's root evaluation can take
    longer than the interval) showed a single playout's area: a lead of
    about 100 points either way.  The first line now waits for 100
    playouts, and even then the lead of a two-move opening is small."""
    from engine.analysis import MIN_REPORT_SIMS

    e = engines("--rollouts", "1000", "--quiet", "--seed", "2")
    for cmd in ["boardsize 19", "komi 7.5", "play b Q16", "play w D4"]:
        assert e.answer(cmd) == ""
    e.send("kata-analyze 1 ownership true")
    assert e.line() == "="
    line = e.line()
    e.send("name")
    end_of_analysis(e)
    assert e.line() == "= delayed-go" and e.line() == ""
    moves, own = sabaki_parse(line, 19)
    assert sum(int(m["visits"]) for m in moves) >= MIN_REPORT_SIMS - 1, line[:300]
    assert abs(float(moves[0]["scoreLead"])) < 30, line[:300]
    assert abs(sum(own)) < 40, line[:300]


def test_analysis_commands_that_fail_leave_the_engine_running(engines) -> None:
    e = engines("--rollouts", "100", "--quiet")
    for bad in ["lz-analyze x y", "lz-analyze B 10 avoid", "kata-analyze B 10 ownership perhaps",
                "lz-genmove_analyze", "lz-analyze B 10 avoid b Z99 1"]:
        e.send(bad)
        assert e.line() == "? syntax error" and e.line() == ""
    assert e.answer("name") == "delayed-go"


def test_pondering_stops_as_soon_as_a_command_arrives(engines) -> None:
    e = engines("--rollouts", "300", "--quiet", "--ponder")
    assert e.answer("boardsize 9") == ""
    e.answer("genmove b")
    time.sleep(1.0)                      # pondering now
    t0 = time.monotonic()
    assert e.answer("name") == "delayed-go"
    assert time.monotonic() - t0 < 1.0
    assert e.answer("play w E5") == ""
    e.send("quit")
    assert e.line() == "="
    assert e.proc.wait(5) == 0


def test_live_gfx_on_stderr_only(engines) -> None:
    e = engines("--rollouts", "100000000", "--time", "1", "--quiet", "--gfx-interval", "0.1")
    assert e.answer("boardsize 9") == ""
    move = e.answer("genmove b")
    assert re.fullmatch(r"[A-HJ]\d|pass", move)
    e.send("quit")
    assert e.line() == "="
    assert e.proc.wait(5) == 0
    time.sleep(0.2)
    err = [s for s in e.stderr if s is not None]
    starts = [i for i, s in enumerate(err) if s == "gogui-gfx:"]
    assert len(starts) >= 3, err[:20]
    for i in starts:
        block = []
        for s in err[i + 1:]:
            if s == "":
                break
            block.append(s)
        assert block and all(s.split()[0] in ("LABEL", "SQUARE", "VAR", "TEXT") for s in block)
    assert err[-1] == "gogui-gfx: CLEAR" or "gogui-gfx: CLEAR" in err


def test_gogui_commands_through_the_engine(engines) -> None:
    e = engines("--rollouts", "200", "--quiet", "--seed", "1")
    assert e.answer("boardsize 5") == ""
    entries = e.answer("gogui-analyze_commands").split("\n")
    known = set(e.answer("list_commands").split("\n"))
    for entry in entries:
        kind, label, command = entry.split("/")
        assert command.split()[0] in known
        args = command.replace("%m", "b")
        answer = e.answer(args)
        if kind == "dboard":
            rows = [r for r in answer.split("\n") if r.strip()]
            assert len(rows) == 5 and all(len(r.split()) == 5 for r in rows)
        elif kind == "gfx":
            assert all(ln.split()[0] in ("INFLUENCE", "LABEL", "VAR") for ln in answer.split("\n"))
        elif kind == "param":
            assert all(re.fullmatch(r"\[(string|bool)\] \w+ \S+", ln) for ln in answer.split("\n"))
    assert e.answer("dg-params rollouts 50") == ""
    assert "[string] rollouts 50" in e.answer("dg-params")


# ---------------------------------------------------------------------------
# npm's @sabaki/gtp, the library Sabaki itself drives engines with


SABAKI_SCRIPT = r"""
const {Controller} = require('@sabaki/gtp')
const [python, ...args] = JSON.parse(process.argv[2])
const engine = new Controller(python, args, {cwd: process.argv[3]})
const out = {answers: {}, lines: []}
async function main() {
  engine.start()
  for (const [name, ...rest] of [['boardsize', '9'], ['clear_board'], ['komi', '6.5'],
                                 ['play', 'B', 'E5'], ['genmove', 'W']]) {
    const r = await engine.sendCommand({name, args: rest})
    out.answers[name] = [r.error, r.content]
  }
  let seen = 0
  let resolveSeen
  const enough = new Promise(r => (resolveSeen = r))
  const analysis = engine.sendCommand({name: 'lz-analyze', args: ['B', '50']}, ({line}) => {
    out.lines.push(line)
    if (line.startsWith('info ') && ++seen >= 2) resolveSeen()
  })
  await enough
  const name = await engine.sendCommand({name: 'name'})   // Sabaki stops analysis this way
  const done = await analysis
  out.analysis = [done.error, done.content.length]
  out.answers.name = [name.error, name.content]
  await engine.stop(5000)
  console.log(JSON.stringify(out))
}
main().catch(err => { console.error(err); process.exit(1) })
"""


def _npm_install_sabaki_gtp(tmp: Path) -> bool:
    if not (shutil.which("node") and shutil.which("npm")):
        return False
    try:
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "@sabaki/gtp"],
                              cwd=tmp, capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and (tmp / "node_modules" / "@sabaki" / "gtp").is_dir()


def test_sabaki_gtp_library_drives_the_engine(tmp_path: Path) -> None:
    if not _npm_install_sabaki_gtp(tmp_path):
        pytest.skip("node/npm or the npm registry is not available")
    script = tmp_path / "drive.js"
    script.write_text(SABAKI_SCRIPT)
    cmd = [sys.executable, "-m", "engine.gtp", "--rollouts", "300", "--quiet"]
    proc = subprocess.run(["node", str(script), json.dumps(cmd), str(ROOT)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    answers = out["answers"]
    assert all(not err for err, _ in answers.values()), answers
    assert re.fullmatch(r"[A-HJ]\d|pass", answers["genmove"][1]), answers
    assert answers["name"] == [False, "delayed-go"]
    assert out["analysis"][0] is False
    info = [ln for ln in out["lines"] if ln.startswith("info ")]
    assert len(info) >= 2 and out["lines"][0] == "=" and out["lines"][-1] == ""
    for line in info:
        moves, _ = sabaki_parse(line, 9)
        assert moves
