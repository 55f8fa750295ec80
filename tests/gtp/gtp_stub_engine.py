"""A misbehaving GTP engine for the client tests (standard library only).

Usage: python gtp_stub_engine.py MODE, where MODE is one of

* ``hang``: reads a command and never answers;
* ``exit``: reads a command and exits with status 3 without answering;
* ``garbage``: answers every command with a line that is not GTP;
* ``die_at_start``: exits at once with status 4;
* ``chatty``: well-formed but unusual answers (ids, CRLF, leading blank line).
"""

from __future__ import annotations

import sys
import time


def main(mode: str) -> int:
    if mode == "die_at_start":
        return 4
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
