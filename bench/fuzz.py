"""Fuzz the GTP engine with random and malformed input, the way a careless
controller (or a new user at the keyboard) would feed it.

    python -m bench.fuzz [--lines 100000] [--seed 1 --seed 2 ...]
        [--engine "python -m engine.gtp --quiet --rollouts 30"]
        [--deadline 30] [--json FILE] [--workdir DIR] [--input FILE]

For each seed it starts the engine (in a scratch folder: ``printsgf FILE``
writes there) and sends ``--lines`` lines drawn from a seeded generator:
every command the engine lists (``list_commands``) with random arguments,
plausible and absurd (colours, vertices on and off the board, numbers like
``1e30``, ``nan``, ``inf`` and ``99999999999``, keywords of the analysis
commands cut short, paths such as ``/dev/zero`` or a FIFO), garbage lines
(control characters, non-ASCII, lines of thousands of characters), command
ids, comments, blank lines and GoGui's ``# interrupt``.  Each line is sent
when the answers to the earlier ones have arrived, except after an
analysis command (``lz-analyze``, ``kata-analyze``, ``analyze``, the
``*genmove_analyze`` family), whose streaming answer the next line, sent
0-0.2 s later, cuts short.  Quick commands are favoured; the engine's own
``--rollouts`` keeps every search short, and ``dg-params rollouts`` is only
given small or invalid values, so that no answer is *meant* to take long.

Checks, counted per seed:

* malformed: an answer that is not ``=[id] text`` or ``?[id] text``
  followed by lines and an empty line, that carries another id than its
  command, that is not UTF-8, or one answer too many;
* stalls: no answer within ``--deadline`` seconds of the line that asked
  for it (the engine is then killed and a fresh one started);
* deaths: the engine's output closing before ``quit`` (restarted too);
* internal errors: ``? internal error`` answers and Python tracebacks on
  the engine's stderr (bugs, even when the session survived them);
* replay: after the random lines, a fixed game (``boardsize 9``,
  ``clear_board``, ``komi``, 31 moves with captures, ``showboard``,
  ``printsgf``) must give the same answers as in a fresh engine;
* exit: ``quit`` must end the process within 2 s.

``--input FILE`` replays a recorded session instead (such as
``../shared/cases/gtp-hang-input.txt``): its lines, byte for byte, are sent
under the same rules and checks, the seed choosing only the pauses after
analysis commands (repeat ``--seed`` to replay it several times); a
``quit`` command in it is left out, since the run ends with its own.

Exit status 0 when every seed had none of the above, 1 otherwise.  The
module's :func:`fuzz` is what ``tests/bench/test_fuzz.py`` runs in CI with
a few thousand lines.
"""

from __future__ import annotations

import argparse
import math
import json
import os
import queue
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.match import split_command
from gtp.protocol import parse, preprocess

DEFAULT_ENGINE = f"{sys.executable} -m engine.gtp --quiet --rollouts 30"
STREAMING = {"lz-analyze", "kata-analyze", "analyze", "lz-genmove_analyze",
             "kata-genmove_analyze", "genmove_analyze"}
HEADER = re.compile(r"^([=?])(\d*)(?: .*)?$")
START_SECONDS = 300.0   # the first answer: numba may compile, torch loads the network
EXIT_SECONDS = 2.0

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"

# the game replayed at the end (9x9, black captures at move 23 and white at 29)
REPLAY_MOVES = ("b E5 w C4 b D3 w D4 b E4 w C3 b D2 w E3 b F3 w C2 b C1 w E2 b F2 w D5 "
                "b E6 w B1 b D1 w B2 b E1 w C6 b D6 w C5 b E3 w G5 b F5 w G4 b F4 w G3 "
                "b G6 w H6 b G7").split()


# ---------------------------------------------------------------------------
# the generator


class LineMaker:
    """Random GTP input lines, from one seeded ``random.Random``."""

    def __init__(self, rng: random.Random, commands: list[str]):
        self.rng = rng
        self.commands = [c for c in commands if c != "quit"]
        self.size = 19      # a guess of the board size, for vertices that fit

    # tokens ---------------------------------------------------------------
    def pick(self, *options):
        return self.rng.choice(options)

    def colour(self) -> str:
        return self.pick("b", "w", "B", "W", "black", "white", "BLACK", "White", "x", "bw", "1",
                         self.garbage(4))

    def vertex(self) -> str:
        r = self.rng.random()
        if r < 0.75:
            n = self.size
            return f"{self.rng.choice(LETTERS[:n])}{self.rng.randint(1, n)}"
        if r < 0.85:
            return self.pick("pass", "PASS", "Pass")
        return self.pick("I5", "Z99", "A0", "A-1", "5E", "tt", "a26", "Z25", "j10", "A", "",
                         self.garbage(3))

    def int_token(self) -> str:
        return self.pick("0", "1", "2", "3", "5", "7", "9", "13", "19", "25", "26", "-1", "-5",
                         "2147483647", "2147483648", "99999999999", "100000000000000000000",
                         "1e30", "1.5", "nan", "inf", "-inf", "0x10", "٣", "+4", self.garbage(5))

    def float_token(self) -> str:
        return self.pick("0", "0.5", "6.5", "7.5", "-7.5", "375", "1e28", "10000000000", "1e30",
                         "1e308", "-1e309", "nan", "NaN", "inf", "-inf", "1000", "-1000.5", "abc",
                         "3,5", self.int_token())

    def garbage(self, n: int | None = None) -> str:
        n = n if n is not None else self.rng.choice((1, 3, 8, 30, 200))
        kind = self.rng.random()
        if kind < 0.4:
            alphabet = "abcdefghijklmnopqrstuvwxyz0123456789!$%&'()*+,-./:;<=>?@[]^_`{|}~\"\\"
            return "".join(self.rng.choice(alphabet) for _ in range(n))
        if kind < 0.7:
            return "".join(chr(self.rng.choice((self.rng.randint(0x80, 0x2fff),
                                                self.rng.randint(0x4e00, 0x9fff))))
                           for _ in range(n))
        return "".join(chr(self.rng.randint(0, 0x7f)) for _ in range(n)).replace("\n", "")

    def path(self) -> str:
        return self.pick("fuzz.sgf", "fuzz.sgf", "game2.sgf", "missing.sgf", "/dev/zero",
                         "/dev/null", ".", "fifo", "/etc/hostname", "sub/none.sgf",
                         self.garbage(6))

    # arguments of each command --------------------------------------------
    def args(self, name: str) -> list[str]:
        rng = self.rng
        if name == "boardsize":
            n = self.pick("9", "9", "13", "19", "19", "5", "2", "25", "7", self.int_token())
            if n.isdigit() and 2 <= int(n) <= 25:
                self.size = int(n)
            return [n]
        if name in ("play",):
            return [self.colour(), self.vertex()]
        if name in ("genmove", "kgs-genmove_cleanup"):
            return [self.colour()]
        if name == "komi":
            return [self.float_token()]
        if name in ("fixed_handicap", "place_free_handicap"):
            return [self.pick("2", "3", "4", "9", "0", "1", "10", self.int_token())]
        if name == "set_free_handicap":
            return [self.vertex() for _ in range(rng.randint(0, 6))]
        if name == "loadsgf":
            return [self.path()] + ([self.int_token()] if rng.random() < 0.4 else [])
        if name == "printsgf":
            return [self.pick("fuzz.sgf", "game2.sgf", "/dev/full", ".", "fifo", "sub/x.sgf",
                              self.garbage(5))] if rng.random() < 0.6 else []
        if name == "time_settings":
            return [self.pick("0", "1", "5", "30", "300", self.int_token()) for _ in range(3)]
        if name == "time_left":
            return [self.colour(), self.pick("0", "1", "5", "30", self.int_token()),
                    self.pick("0", "1", "5", self.int_token())]
        if name == "kgs-time_settings":
            kind = self.pick("none", "absolute", "byoyomi", "canadian", "fischer", self.garbage(4))
            return [kind] + [self.pick("0", "1", "5", "30", self.int_token())
                             for _ in range(rng.randint(0, 4))]
        if name == "final_status_list":
            return [self.pick("alive", "dead", "seki", "ALIVE", self.garbage(4))]
        if name == "kgs-rules":
            return [self.pick("japanese", "chinese", "aga", "new_zealand", self.garbage(5))]
        if name == "known_command":
            return [self.pick(*self.commands, "frobnicate", self.garbage(6))]
        if name == "dg-params":
            return self.params()
        if name in ("dg-priors", "dg-visits", "dg-winrates", "dg-pv"):
            return [self.colour()] if rng.random() < 0.5 else []
        if name in STREAMING:
            return self.analysis(need_colour="genmove" in name)
        return []           # commands without arguments

    def params(self) -> list[str]:
        r = self.rng.random()
        if r < 0.15:
            return []
        key = self.pick("rollouts", "threads", "resign", "time", "ponder", "gfx_interval",
                        "colour", self.garbage(4))
        values = {
            "rollouts": ("1", "5", "30", "0", "-3", "1e30", "99999999999", "nan", "x"),
            "threads": ("1", "2", "3", "8", "0", "65", "1000", "nan", "-1"),
            "resign": ("0", "0.05", "0.5", "1", "2", "-0.1", "nan", "inf"),
            "time": ("0", "0.01", "0.2", "-1", "1e30", "nan", "inf", "100000"),
            "ponder": ("0", "1", "true", "false", "maybe"),
            "gfx_interval": ("0", "0.05", "-1", "inf", "nan", "1e300"),
        }.get(key, ("1", self.garbage(3)))
        out = [key, self.pick(*values)]
        return out[:self.rng.choice((1, 2, 2, 2, 2))] + ([self.garbage(3)]
                                                         if self.rng.random() < 0.1 else [])

    def analysis(self, need_colour: bool) -> list[str]:
        rng = self.rng
        out = []
        if need_colour or rng.random() < 0.6:
            out.append(self.colour())
        if rng.random() < 0.6:
            out.append(self.pick("5", "10", "20", "50", "100", "0", "1e30", "99999999999",
                                 "-1", "nan", self.int_token()))
        for _ in range(rng.choice((0, 0, 1, 2, 3))):
            key = self.pick("interval", "avoid", "allow", "minmoves", "maxmoves", "ownership",
                            "pvVisits", self.garbage(3))
            out.append(key)
            if key in ("avoid", "allow"):
                moves = ",".join(self.vertex() for _ in range(rng.randint(1, 5)))
                out += [self.colour(), moves, self.pick("1", "2", "10", "0", "x")][
                    :rng.choice((1, 2, 3, 3, 3))]
            elif key == "ownership":
                out.append(self.pick("true", "false", "maybe"))
            else:
                out.append(self.pick("1", "5", "20", "0", "99999999999", "1e30", "x"))
        return out[:rng.randint(len(out) // 2, len(out))]     # sometimes cut short

    # whole lines --------------------------------------------------------------
    def line(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.03:
            return self.pick("", "   ", "\t", "# a comment", "# interrupt")
        if r < 0.07:
            return self.garbage(rng.choice((5, 40, 300, 5000)))
        if r < 0.08:
            return "name " + "x" * rng.choice((1000, 10000))
        if r < 0.10:
            return self.pick("quit extra", "42", "7 frobnicate now", "PLAY b D4", "Play w C3")
        name = self.weighted_command()
        words = [name] + self.args(name)
        if rng.random() < 0.1:
            words.insert(0, self.pick("1", "42", "0", "999999999999", "٣"))
        line = " ".join(words)
        m = rng.random()
        if m < 0.05:
            line += " # " + self.garbage(10)
        elif m < 0.08:
            line = line.replace(" ", "\t")
        elif m < 0.10:
            i = rng.randint(0, len(line))
            line = line[:i] + chr(rng.choice((0, 1, 7, 8, 11, 12, 13, 27, 127))) + line[i:]
        elif m < 0.12:
            line = "  " + line + "  "
        return line

    def weighted_command(self) -> str:
        """Any listed command; analysis, searches and handicap setups less
        often than cheap commands, moves more often."""
        r = self.rng.random()
        if r < 0.25:
            return "play"
        if r < 0.31:
            return self.pick(*sorted(STREAMING & set(self.commands)) or self.commands)
        return self.pick(*self.commands)


# ---------------------------------------------------------------------------
# the engine process


class Engine:
    """The engine as a subprocess: raw lines in, raw answer lines out."""

    def __init__(self, command: list[str], cwd: Path, stderr_path: Path):
        self.stderr = open(stderr_path, "ab")
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def send(self, line: str) -> bool:
        try:
            self.proc.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def close(self, grace: float = EXIT_SECONDS) -> float | None:
        """Close stdin and wait; seconds to exit, or None (then killed)."""
        t0 = time.monotonic()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(grace)
            return time.monotonic() - t0
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class Answers:
    """Assembles answer blocks from the engine's lines and checks them."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.current: list[bytes] = []
        self.dead = False

    def next(self, deadline: float) -> list[bytes] | None:
        """The next complete answer (its lines, the empty one left out), or
        None at the deadline; sets ``dead`` when the output closed."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                raw = self.engine.lines.get(timeout=left)
            except queue.Empty:
                return None
            if raw is None:
                self.dead = True
                return None
            line = raw.rstrip(b"\n")
            if line == b"" and self.current:
                block, self.current = self.current, []
                return block
            if line != b"":
                self.current.append(line)


def check_answer(block: list[bytes], want_id: int | None) -> str | None:
    """What is wrong with one answer, or None."""
    try:
        text = [ln.decode("utf-8") for ln in block]
    except UnicodeDecodeError:
        return "not UTF-8"
    m = HEADER.match(text[0])
    if m is None:
        return f"bad first line {text[0][:80]!r}"
    got_id = int(m.group(2)) if m.group(2) else None
    if got_id != want_id:
        return f"id {got_id} for a command with id {want_id}"
    if any(ch in ln for ln in text for ch in "\r\x00"):
        return "control characters in the answer"
    return None


@dataclass
class SeedResult:
    seed: int
    lines: int = 0
    commands: int = 0
    answers: int = 0
    malformed: int = 0
    stalls: int = 0
    deaths: int = 0
    internal_errors: int = 0
    tracebacks: int = 0
    replay_identical: bool = False
    exit_seconds: float | None = None
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return (self.malformed == self.stalls == self.deaths == self.internal_errors
                == self.tracebacks == 0 and self.replay_identical
                and self.exit_seconds is not None and self.exit_seconds <= EXIT_SECONDS)


def _replay_lines() -> list[str]:
    moves = [f"play {c} {v}" for c, v in zip(REPLAY_MOVES[::2], REPLAY_MOVES[1::2])]
    return ["boardsize 9", "clear_board", "komi 6.5", *moves, "showboard", "printsgf"]


def _converse(engine: Engine, lines: list[str], deadline: float) -> list[str] | None:
    """Send lines one by one and collect their answers (None on failure)."""
    answers = Answers(engine)
    out = []
    for line in lines:
        engine.send(line)
        block = answers.next(time.monotonic() + deadline)
        if block is None:
            return None
        out.append(b"\n".join(block).decode("utf-8", "replace"))
    return out


def read_session(path: Path) -> list[str]:
    """A recorded session's lines (bytes that are not UTF-8 kept as
    surrogates, so that :meth:`Engine.send` writes them back unchanged),
    less its ``quit`` commands."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line for line in lines if not _is_quit(line)]


def _is_quit(line: str) -> bool:
    clean = preprocess(line)
    return clean is not None and parse(clean).name == "quit"


def fuzz(seed: int, lines: int, engine_cmd: list[str], workdir: Path, deadline: float = 30.0,
         log=None, source: list[str] | None = None) -> SeedResult:
    """One seed's run (see the module documentation); ``source``, a
    recorded session's lines (:func:`read_session`), replaces the random
    lines and ``lines``."""
    res = SeedResult(seed)
    if source is not None:
        lines = len(source)
    rng = random.Random(seed)
    scratch = workdir / f"seed{seed}"
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "sub").mkdir(exist_ok=True)
    if not (scratch / "fifo").exists() and hasattr(os, "mkfifo"):
        os.mkfifo(scratch / "fifo")
    stderr_path = scratch / "engine.stderr"
    stderr_path.write_bytes(b"")
    started = time.monotonic()

    def start() -> tuple[Engine, Answers]:
        eng = Engine(engine_cmd, scratch, stderr_path)
        return eng, Answers(eng)

    engine, answers = start()
    first = _converse(engine, ["list_commands"], START_SECONDS)
    if first is None:
        raise RuntimeError(f"the engine did not start: see {stderr_path}")
    commands = [c.strip("= ").strip() for c in first[0].split("\n") if c.strip("= ").strip()]
    maker = LineMaker(rng, commands)
    recent: list[str] = []
    expected: list[int | None] = []      # ids of the commands whose answers are due
    sent_at = time.monotonic()

    def note(problem: str) -> None:
        res.problems.append(f"line {res.lines}: {problem}; last lines {recent[-6:]!r}")
        if log:
            log(f"seed {seed}: {res.problems[-1]}")

    def collect(answers: Answers, expected: list, until: float) -> None:
        """Every answer due must come by ``until`` (the deadline of the last
        line sent)."""
        while expected and not answers.dead:
            block = answers.next(until)
            if block is None:
                return
            res.answers += 1
            problem = check_answer(block, expected.pop(0))
            if problem:
                res.malformed += 1
                note(f"malformed answer ({problem})")
            if block[0].startswith(b"?") and b"internal error" in block[0]:
                res.internal_errors += 1
                note(f"internal error: {block[0][:120]!r}")

    for i in range(lines):
        if log and i and i % 10000 == 0:
            log(f"seed {seed}: {i:,} lines, {res.commands:,} commands answered, "
                f"{time.monotonic() - started:.0f} s")
        line = maker.line() if source is None else source[i]
        recent = (recent + [line[:120]])[-20:]
        res.lines += 1
        if not engine.send(line):
            answers.dead = True
        clean = preprocess(line)
        if clean is not None and not answers.dead:
            res.commands += 1
            cmd = parse(clean)
            expected.append(cmd.id)
            sent_at = time.monotonic()
            if cmd.name in STREAMING:
                time.sleep(rng.uniform(0.0, 0.2))
                continue
        collect(answers, expected, sent_at + deadline)
        if answers.dead or expected:
            if answers.dead:
                res.deaths += 1
                note(f"the engine died (exit status {engine.proc.poll()})")
            else:
                res.stalls += 1
                note(f"no answer within {deadline:g} s")
            engine.kill()
            engine, answers = start()
            expected = []
            if _converse(engine, ["name"], START_SECONDS) is None:
                raise RuntimeError(f"the engine did not restart: see {stderr_path}")
    if expected:                        # the last line was an analysis: a blank line ends it
        engine.send("")
        collect(answers, expected, time.monotonic() + deadline)
        if expected or answers.dead:
            res.stalls += 1
            note("the last analysis did not end")
    # a fixed game, compared with a fresh engine's answers
    got = _converse(engine, _replay_lines(), deadline)
    fresh_engine = Engine(engine_cmd, scratch, scratch / "fresh.stderr")
    want = _converse(fresh_engine, _replay_lines(), START_SECONDS)
    fresh_engine.close()
    fresh_engine.kill()
    res.replay_identical = got is not None and got == want
    if not res.replay_identical:
        note("the replayed game differs from a fresh engine's")
    engine.send("quit")
    res.exit_seconds = engine.close(EXIT_SECONDS + 1.0)
    engine.kill()
    if res.exit_seconds is None or res.exit_seconds > EXIT_SECONDS:
        note(f"quit did not end the process within {EXIT_SECONDS:g} s")
    res.tracebacks = stderr_path.read_bytes().count(b"Traceback (most recent call last)")
    if res.tracebacks:
        note(f"{res.tracebacks} traceback(s) on the engine's stderr ({stderr_path})")
    res.seconds = round(time.monotonic() - started, 1)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=10000, help="random lines per seed")
    ap.add_argument("--seed", type=int, action="append", default=None,
                    help="seed (repeatable; default 1)")
    ap.add_argument("--engine", default=DEFAULT_ENGINE, help="engine command line")
    ap.add_argument("--deadline", type=float, default=30.0,
                    help="seconds an answer may take (default %(default)s)")
    ap.add_argument("--workdir", default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--input", default=None, metavar="FILE",
                    help="replay this recorded session instead of random lines")
    args = ap.parse_args(argv)
    if args.lines < 1 or not 0 < args.deadline < math.inf:
        ap.error("--lines and --deadline must be positive")
    try:    # "python" means this interpreter, as in bench.match
        engine_cmd = split_command(args.engine)
    except ValueError as e:
        ap.error(f"--engine: {e}")
    source = None
    if args.input:
        try:
            source = read_session(Path(args.input))
        except OSError as e:
            ap.error(f"--input {args.input}: {e.strerror or e}")
        if not source:
            ap.error(f"--input {args.input}: no lines to send")
    seeds = args.seed or [1]
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="gtp-fuzz-"))

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results = []
    print("| seed | lines | commands | answers | malformed | stalls | deaths | internal errors "
          "| tracebacks | replay | exit (s) | minutes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for seed in seeds:
        try:
            r = fuzz(seed, args.lines, engine_cmd, workdir, args.deadline, log, source)
        except (OSError, RuntimeError) as e:
            print(f"error: seed {seed}: {e}", file=sys.stderr)
            return 2
        results.append(r)
        exit_s = "-" if r.exit_seconds is None else f"{r.exit_seconds:.2f}"
        print(f"| {r.seed} | {r.lines:,} | {r.commands:,} | {r.answers:,} | {r.malformed} | "
              f"{r.stalls} | {r.deaths} | {r.internal_errors} | {r.tracebacks} | "
              f"{'identical' if r.replay_identical else 'DIFFERS'} | {exit_s} | "
              f"{r.seconds / 60:.1f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1))
    print(f"scratch folder (stderr logs): {workdir}", file=sys.stderr)
    return 0 if all(r.clean for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
