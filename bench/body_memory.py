"""What oversized request bodies cost the embedded default's server (issue 24, points 4 and 5).

Run: .venv/bin/python bench/body_memory.py [--gib 1] [--runserver]

Starts the server as ``make run`` does (gunicorn with gpuselect/gunicorn_embedded.py, local
settings, DEBUG off; tests/integration/test_embedded_concurrency.py's
``embedded_server_running``) on a throwaway SQLite file with the catalog and demo data, then
sends, one after another:

- ``--gib`` GiB to ``POST /api/v1/briefs/`` with its Content-Length, streamed from one reused
  1 MiB buffer (the client holds no more than that), as the demo platform user;
- 500 MB to ``POST /healthz``, anonymous;
- 1 GiB to ``POST /api/v1/briefs/`` chunked (no Content-Length);
- 18 MB of ``{}`` (and of ``[{},{},...]``) to ``POST /api/v1/briefs/``, and 3 MB of
  ``[{},{},...]`` (under the byte limit, past the element count);
- acceptance criteria of 4,800 keys x 1 kB (4.8 MB) to ``POST /api/v1/decision-records/``.

For each it prints the status, how long the answer took, how many bytes the client got to send
before the server answered and closed, and the server's resident memory (master and worker,
from /proc) before and after. Prints figures only; nothing here asserts. Aim (issue 24): the
1 GiB body leaves the server within 50 MB of where it was; the 18 MB body is refused in well
under a second. ``--runserver`` serves with Django's development server instead (what ``make
run`` served before issue 24), for the figures before.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_embedded_concurrency import embedded_server_running  # noqa: E402

MIB = 1 << 20
GIB = 1 << 30
SEND_CHUNK = b"x" * MIB  # one buffer, sent again and again
ANSWER_WAIT_S = 60.0
SEND_WAIT_S = 600.0  # for a server that reads the whole refused body (the development server)
AIM_GROWTH_MB = 50


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def server_pids(master: int) -> list[int]:
    """gunicorn's master and its workers (the processes whose parent is the master)."""
    pids = [master]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == master:
                pids.append(int(entry.name))
    return pids


def server_rss_mb(master: int) -> float:
    return sum(rss_kib(pid) for pid in server_pids(master)) / 1024


def send_body(
    base: str,
    path: str,
    headers: dict[str, str],
    total: int,
    *,
    chunked: bool = False,
    body: bytes | None = None,
) -> tuple[str, float, int]:
    """POST ``total`` bytes to ``path`` (``body``, or the reused buffer), streamed, while
    reading the answer as it comes. Like curl, the client keeps sending after the answer until
    the body is sent or the server closes the connection: whatever the server reads of the
    rest shows in its memory. (The answer's status line and its last line, seconds to the
    answer, bytes the client got to send.)"""
    address = urlsplit(base)
    sock = socket.create_connection((address.hostname, address.port), timeout=ANSWER_WAIT_S)
    head = [f"POST {path} HTTP/1.1", f"Host: {address.hostname}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    sent = [0]

    def sender() -> None:
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
            while sent[0] < total:
                size = min(MIB, total - sent[0])
                piece = SEND_CHUNK[:size] if body is None else body[sent[0] : sent[0] + size]
                if chunked:
                    sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                else:
                    sock.sendall(piece)
                sent[0] += len(piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed: what a refusal should do

    started = time.perf_counter()
    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    try:
        received = sock.recv(65536)
        elapsed = time.perf_counter() - started
        sock.settimeout(1.0)  # the rest of a short answer, if it came in two parts
        with contextlib.suppress(OSError):
            while b"\r\n\r\n" not in received or received.endswith(b"\r\n\r\n"):
                more = sock.recv(65536)
                if not more:
                    break
                received += more
        sock.settimeout(ANSWER_WAIT_S)
        answer = received.decode(errors="replace")
    except OSError as exc:
        elapsed = time.perf_counter() - started
        answer = f"(no answer: {exc!r})"
    thread.join(timeout=SEND_WAIT_S)
    sock.close()
    lines = answer.splitlines() or ["(empty)"]
    shown = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1][:90]}"
    return shown, elapsed, sent[0]


def warm_up(base: str, token: str) -> None:
    """A few ordinary requests, so the worker has imported and cached what it serves."""
    for path in ("/healthz", "/api/v1/briefs/", "/api/v1/gpus/", "/accounts/login/"):
        request = urllib.request.Request(  # noqa: S310 - a loopback URL we built
            base + path, headers={"Authorization": f"Token {token}"}
        )
        for _ in range(3):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(request, timeout=60).read()  # noqa: S310


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the large body, GiB")
    parser.add_argument(
        "--runserver",
        action="store_true",
        help="Django's development server instead (what make run served before issue 24)",
    )
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    served = "runserver (before issue 24)" if args.runserver else "make run's gunicorn"
    print(f"== gpuselect embedded default: oversized bodies ({served}, SQLite) ==")
    print(
        f"date:        {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {commit}\n"
        f"machine:     {platform.platform()}; {os.cpu_count()} CPUs; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    large = int(args.gib * GIB)
    with (
        tempfile.TemporaryDirectory(prefix="gpuselect-body-memory-") as tmp,
        embedded_server_running(Path(tmp), runserver=args.runserver) as server,
    ):
        base, master = server["base"], server["pid"]
        token = server["tokens"]["platform"]
        api = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        warm_up(base, token)
        print(f"server:      {served}, processes {server_pids(master)}")
        started_mb = server_rss_mb(master)
        print(f"RSS at start (after warm-up): {started_mb:.1f} MB")
        criteria = {f"gate_{i:04d}": "x" * 1000 for i in range(4800)}
        cases = [
            (f"{args.gib:g} GiB POST /api/v1/briefs/", "/api/v1/briefs/", api, large, False),
            ("500 MB POST /healthz, anonymous", "/healthz", {}, 500 * 1000 * 1000, False),
            (
                f"{args.gib:g} GiB POST /api/v1/briefs/, chunked",
                "/api/v1/briefs/",
                api,
                large,
                True,
            ),
        ]
        for label, path, headers, total, chunked in cases:
            before = server_rss_mb(master)
            status, elapsed, sent = send_body(base, path, headers, total, chunked=chunked)
            time.sleep(1.0)  # let the worker settle before reading its memory
            after = server_rss_mb(master)
            print(
                f"{label}: {status!r} in {elapsed:.3f} s; client sent {sent / MIB:,.1f} MiB "
                f"of {total / MIB:,.0f}; RSS {before:.1f} -> {after:.1f} MB "
                f"({after - before:+.1f} MB)"
            )
        bodies = [
            ("18 MB of {}", b"{}" * 9_000_000),
            ("18 MB of [{},{},...]", b"[" + b"{}," * 6_000_000 + b"{}]"),
            # Under the 5 MiB byte limit: the parser's element count stops it while reading.
            ("3 MB of [{},{},...]", b"[" + b"{}," * 1_000_000 + b"{}]"),
            (
                "4.8 MB acceptance criteria (4,800 keys x 1 kB)",
                json.dumps(
                    {
                        "brief": 1,
                        "chosen_quote": 1,
                        "capacity_model": "RENT_ON_DEMAND",
                        "acceptance_criteria": criteria,
                    }
                ).encode(),
            ),
        ]
        for label, raw in bodies:
            path = "/api/v1/decision-records/" if "criteria" in label else "/api/v1/briefs/"
            before = server_rss_mb(master)
            status, elapsed, sent = send_body(base, path, api, len(raw), body=raw)
            after = server_rss_mb(master)
            print(
                f"{label} ({len(raw) / 1e6:.1f} MB) to {path}: {status!r} in {elapsed:.3f} s; "
                f"client sent {sent / MIB:,.1f} MiB; RSS {before:.1f} -> {after:.1f} MB"
            )
        ended_mb = server_rss_mb(master)
        growth = ended_mb - started_mb
        print(
            f"RSS at the end: {ended_mb:.1f} MB ({growth:+.1f} MB over the start; "
            f"aim within {AIM_GROWTH_MB} MB: {'met' if abs(growth) <= AIM_GROWTH_MB else 'MISSED'})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
