# mcpserver.py — drives `ingero-analyze mcp` over its stdio transport for the
# Python e2e tests (tests/e2e/mcp_edges.sh, mcp_cancel.sh, analyzer_nodes.sh): raw lines in,
# replies read with a deadline, so a reply that never comes is a failed
# check and not a hung test.
import json, os, select, subprocess, sys, time

failed = False


def ok(cond, what, extra=""):
    global failed
    print(("ok - " if cond else "not ok - ") + what + ("" if cond or extra == "" else f" ({extra})"), flush=True)
    failed |= not cond
    return cond


class Server:
    def __init__(self, server, db, *extra, more=(), env=None, stderr=None):
        # more: further report.db after db, one a node of one job (tests/e2e/analyzer_nodes.sh)
        self.p = subprocess.Popen([server, "mcp", *extra, db, *more], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=stderr or subprocess.DEVNULL, env=env)
        self.buf = b""
        self.n = 1000

    def send(self, raw):
        if not isinstance(raw, (bytes, str)):
            raw = json.dumps(raw)
        if isinstance(raw, str):
            raw = raw.encode()
        self.p.stdin.write(raw + b"\n")
        self.p.stdin.flush()

    def recv_raw(self, timeout=20):
        """The next reply line as bytes, or None when none came in time."""
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def recv(self, timeout=20):
        line = self.recv_raw(timeout)
        return None if line is None else json.loads(line)

    def request(self, method, params=None, id=None):
        """Sends a request; returns its id."""
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n if id is None else id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return msg["id"]

    def call(self, method, params=None, id=None, timeout=20):
        self.request(method, params, id)
        return self.recv(timeout)

    def tool(self, name, args, timeout=20):
        return self.call("tools/call", {"name": name, "arguments": args}, timeout=timeout)

    def initialize(self):
        r = self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "mcpserver.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self, timeout=20):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        rc = self.p.wait(timeout=timeout)
        return rc, [json.loads(l) for l in (self.buf + rest).splitlines() if l.strip()]


def text(result):
    return "".join(c.get("text", "") for c in (result or {}).get("content", []))


def err_code(r):
    return r and r.get("error", {}).get("code")


def finish():
    sys.exit(1 if failed else 0)
