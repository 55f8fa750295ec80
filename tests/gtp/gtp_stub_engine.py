"""A misbehaving GTP engine for the client tests (standard library only).

Usage: python gtp_stub_engine.py MODE, where MODE is one of

* ``hang``: reads a command and never answers;
* ``exit``: reads a command and exits with status 3 without answering;
* ``garbage``: answers every command with a line that is not GTP;
* ``die_at_start``: exits at once with status 4;
* ``chatty``: well-formed but unusual answers (ids, CRLF, leading blank line);
* ``stream``: streaming commands, answered the way gtp/server.py answers
  ``lz-analyze``: ``=`` (with the command's id), then lines until any input
  line arrives, then the empty line, then that input is handled:

  - ``analyze``: ``info N`` lines every 5 ms; ``analyze bad``: a ``?`` answer;
  - ``inline``: like ``analyze``, with ``info 0`` on the ``=`` line itself;
  - ``quiet``: no lines at all until input arrives;
  - ``count N``: N ``info`` lines and ``play D4``, then ends by itself
    (like ``lz-genmove_analyze``);
  - ``die``: two ``info`` lines, then exits with status 5;
  - ``deaf``: ``info`` lines that input does not stop;
  - ``quit`` ends the session; anything else is echoed.
"""

from __future__ import annotations

import queue
import sys
import threading
import time


def main(mode: str) -> int:
    if mode == "die_at_start":
        return 4
    if mode == "stream":
        return streaming()
    for line in sys.stdin:
        command = line.split()
        if not command:
            continue
        if mode == "hang":
            time.sleep(60)
        elif mode == "exit":
            return 3
        elif mode == "garbage":
            sys.stdout.write("hello, I am not a GTP engine\n\n")
        elif mode == "chatty":
            if command[0] == "quit":
                sys.stdout.write("=\n\n")
                sys.stdout.flush()
                return 0
            if command[0] == "multi":
                sys.stdout.write("=17 first\r\nsecond\r\n\r\n")
            elif command[0] == "blank_first":
                sys.stdout.write("\n= \n  A B\n1 . .\n\n")
            elif command[0] == "fail":
                sys.stdout.write("?3 cannot score\n\n")
            elif command[0] == "bad_status":
                sys.stdout.write("=x oops\n\n")
            else:
                sys.stdout.write("= " + " ".join(command) + "\n\n")
        sys.stdout.flush()
    return 0


def streaming() -> int:
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line)
        lines.put("")                       # end of input

    threading.Thread(target=read, daemon=True).start()

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def stream(first: int = 0, stop: bool = True, quiet: bool = False) -> None:
        """info lines every 5 ms until an input line arrives (left in the queue)."""
        n = first
        while not stop or lines.empty():
            if not quiet:
                write(f"info {n}\n")
            n += 1
            time.sleep(0.005)

    while True:
        raw = lines.get()
        if not raw:
            return 0
        words = raw.split()
        if not words:
            continue
        ident = words.pop(0) if words[0].isdigit() else ""
        name, args = (words[0], words[1:]) if words else ("", [])
        if name == "quit":
            write(f"={ident}\n\n")
            return 0
        if name == "analyze" and args == ["bad"]:
            write(f"?{ident} cannot analyze\n\n")
        elif name in ("analyze", "inline", "deaf", "quiet"):
            write(f"={ident}\n" if name != "inline" else f"={ident} info 0\n")
            stream(first=1 if name == "inline" else 0, stop=name != "deaf",
                   quiet=name == "quiet")
            write("\n")
        elif name == "count":
            write(f"={ident}\n" + "".join(f"info {i}\n" for i in range(int(args[0])))
                  + "play D4\n\n")
        elif name == "die":
            write(f"={ident}\ninfo 0\ninfo 1\n")
            return 5
        else:
            write(f"={ident} " + " ".join(words) + "\n\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
