"""A real ``retryd serve`` for the tests, and loopback targets that answer as a test scripts them."""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CLI = ROOT / "packages" / "server" / "dist" / "cli" / "main.js"
VECTORS = ROOT / "clients" / "shared" / "client-vectors.json"
SECRET_VALUE = "Bearer s3cret-orders"
"""What the service's {{secret:ORDERS_TOKEN}} resolves to."""

_lock = threading.Lock()
_service: dict[str, object] = {}


def service_url() -> str:
    """The URL of a `retryd serve` (the built CLI) on an in-memory SQLite store, a free port, loopback targets allowed
    and one secret: started on first use, stopped when the tests end."""
    with _lock:
        if "url" not in _service:
            _service["url"] = _start()
        return str(_service["url"])


def _start() -> str:
    if not CLI.exists():
        raise RuntimeError(f"the retryd CLI is not built ({CLI}): run npm run build at the repository root")
    env = {**os.environ, "RETRYD_SECRET_ORDERS_TOKEN": SECRET_VALUE, "RETRYD_API_KEY": ""}
    child = subprocess.Popen(["node", str(CLI), "serve", "--port", "0", "--store", "sqlite::memory:",
                              "--allow-targets", "127.0.0.1/32"], stdout=subprocess.PIPE, env=env)
    atexit.register(_stop, child)
    started: queue.Queue[str] = queue.Queue()

    # Reads every line the service prints: an unread pipe would fill and stop it.
    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "start":
                started.put(entry["url"])

    threading.Thread(target=read, daemon=True).start()
    try:
        return started.get(timeout=90)
    except queue.Empty:
        raise RuntimeError("retryd serve printed no start line within 90 s") from None


def _stop(child: subprocess.Popen[bytes]) -> None:
    child.terminate()
    try:
        child.wait(timeout=15)
    except subprocess.TimeoutExpired:
        child.kill()


class Target:
    """A loopback HTTP server answering each request with the next status of its script (the last one repeats), with
    ``headers``, and recording what it received (method, path, headers, body)."""

    def __init__(self, *statuses: int, headers: dict[str, str] | None = None):
        self.statuses = list(statuses)
        self.headers = headers or {}
        self.received: list[dict[str, object]] = []
        self._lock = threading.Lock()
        target = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with target._lock:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    target.received.append({"method": self.command, "path": self.path, "headers": headers,
                                            "body": body.decode("utf-8", "replace")})
                    n = len(target.received)
                    status = target.statuses[n - 1] if n <= len(target.statuses) else target.statuses[-1]
                text = json.dumps({"answer": status}).encode()
                self.send_response(status)
                for name, value in target.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def script(self, *statuses: int) -> None:
        """What the target answers from its next request on."""
        with self._lock:
            self.statuses = [0] * len(self.received) + list(statuses)

    def requests(self) -> list[dict[str, object]]:
        with self._lock:
            return list(self.received)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
