#!/usr/bin/env python3
"""A stand-in IDE for Claude Code's IDE protocol (Python 3.11 standard library
only): an MCP server over WebSocket on 127.0.0.1 that writes the lock file
Claude Code looks for, logs everything it receives and answers the IDE tools.
It is the reference to compare Verbatim's endpoint with, and the probe that
README.md's protocol notes were taken with.

    python3 fake_ide.py --home HOME --workspace DIR --log IDE.jsonl [--port-file F]
                        [--open-diff accept|modify|reject|close|hold] [--no-lock]

- Writes HOME/.claude/ide/PORT.lock: {pid, workspaceFolders: [DIR], ideName,
  transport: "ws", authToken} (removed on exit). With --no-lock it writes none;
  point Claude Code at it with CLAUDE_CODE_SSE_PORT=PORT ENABLE_IDE_INTEGRATION=true.
- Refuses an upgrade without the right X-Claude-Code-Ide-Authorization (401)
  or with an Origin header (403).
- --open-diff decides openDiff's answer: accept (FILE_SAVED and the proposed
  contents, the default), modify (FILE_SAVED and the proposal plus the line
  "added in the IDE"), reject (DIFF_REJECTED), close (TAB_CLOSED), hold (never
  answers: Claude Code's terminal prompt stays the way to decide).
- --select-first-line FILE sends a selection_changed notification for FILE's
  first line 0.2 s after answering prompts/list.
- Log lines (JSON): {"t", "what": "upgrade", "headers", "path"}, {"t", "what":
  "in", "message"}, {"t", "what": "out", "message"}, {"t", "what": "closed"}.
"""

import argparse
import base64
import hashlib
import json
import os
import secrets
import signal
import socket
import struct
import sys
import threading
import time

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MODIFIED_LINE = "added in the IDE\n"

TOOLS = [
    ("openDiff", "Open a diff view to compare the old file and the new contents",
     {"old_file_path": "string", "new_file_path": "string", "new_file_contents": "string",
      "tab_name": "string"}),
    ("getDiagnostics", "Get language diagnostics", {"uri": "string"}),
    ("close_tab", "Close a tab by name", {"tab_name": "string"}),
    ("closeAllDiffTabs", "Close all diff tabs", {}),
    ("openFile", "Open a file in the editor", {"filePath": "string"}),
    ("getOpenEditors", "List the open editors", {}),
    ("getWorkspaceFolders", "List the workspace folders", {}),
    ("getCurrentSelection", "The current selection", {}),
    ("getLatestSelection", "The latest selection", {}),
    ("checkDocumentDirty", "Whether a document has unsaved changes", {"filePath": "string"}),
    ("saveDocument", "Save a document", {"filePath": "string"}),
]


class Log:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def write(self, what, **fields):
        with self.lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"t": round(time.time(), 3), "what": what, **fields}) + "\n")


def read_frame(conn):
    """(opcode, payload) of one client frame, or None at EOF."""
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    header = exactly(2)
    if header is None:
        return None
    opcode = header[0] & 0x0F
    length = header[1] & 0x7F
    if length == 126:
        length = struct.unpack(">H", exactly(2))[0]
    elif length == 127:
        length = struct.unpack(">Q", exactly(8))[0]
    mask = exactly(4) if header[1] & 0x80 else b"\0\0\0\0"
    payload = bytearray(exactly(length) or b"")
    for i in range(len(payload)):
        payload[i] ^= mask[i % 4]
    return header[0] & 0x80, opcode, bytes(payload)


def send_frame(conn, opcode, payload):
    length = len(payload)
    if length < 126:
        header = struct.pack(">BB", 0x80 | opcode, length)
    elif length < 65536:
        header = struct.pack(">BBH", 0x80 | opcode, 126, length)
    else:
        header = struct.pack(">BBQ", 0x80 | opcode, 127, length)
    conn.sendall(header + payload)


class Connection:
    def __init__(self, conn, log, options):
        self.conn = conn
        self.log = log
        self.options = options
        self.send_lock = threading.Lock()

    def send(self, message):
        self.log.write("out", message=message)
        with self.send_lock:
            send_frame(self.conn, 0x1, json.dumps(message).encode())

    def answer(self, message):
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            return {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {"listChanged": True}, "prompts": {}},
                    "serverInfo": {"name": "fake-ide", "version": "0.0.1"}}
        if method == "tools/list":
            return {"tools": [{"name": name, "description": description, "inputSchema": {
                "type": "object", "properties": {k: {"type": v} for k, v in props.items()}}}
                for name, description, props in TOOLS]}
        if method == "prompts/list":
            if self.options.select_first_line:
                threading.Timer(0.2, self.send_selection).start()
            return {"prompts": []}
        if method == "tools/call":
            return self.call(params.get("name"), params.get("arguments") or {})
        return None

    def send_selection(self):
        """selection_changed for the first line of --select-first-line's file."""
        path = os.path.abspath(self.options.select_first_line)
        with open(path, encoding="utf-8") as f:
            first = f.readline().rstrip("\n")
        self.send({"jsonrpc": "2.0", "method": "selection_changed", "params": {
            "text": first, "filePath": path, "fileUrl": "file://" + path,
            "selection": {"start": {"line": 0, "character": 0},
                          "end": {"line": 0, "character": len(first)}, "isEmpty": not first}}})

    def call(self, name, arguments):
        def text(*parts):
            return {"content": [{"type": "text", "text": p} for p in parts]}
        if name == "openDiff":
            outcome = self.options.open_diff
            if outcome == "accept":
                return text("FILE_SAVED", arguments.get("new_file_contents", ""))
            if outcome == "modify":
                return text("FILE_SAVED", arguments.get("new_file_contents", "") + MODIFIED_LINE)
            if outcome == "reject":
                return text("DIFF_REJECTED", arguments.get("tab_name", ""))
            if outcome == "close":
                return text("TAB_CLOSED")
            return "hold"
        if name == "getDiagnostics":
            return text("[]")
        if name == "close_tab":
            return text("TAB_CLOSED")
        if name == "closeAllDiffTabs":
            return text("CLOSED_0_DIFF_TABS")
        if name == "getWorkspaceFolders":
            return text(json.dumps({"success": True, "folders": [
                {"name": os.path.basename(self.options.workspace), "uri":
                 "file://" + self.options.workspace, "path": self.options.workspace}],
                "rootPath": self.options.workspace}))
        if name == "getOpenEditors":
            return text(json.dumps({"tabs": []}))
        if name in ("getCurrentSelection", "getLatestSelection"):
            return text(json.dumps({"success": False, "message": "No active editor found"}))
        if name == "checkDocumentDirty":
            return text(json.dumps({"success": True, "isDirty": False}))
        return text(json.dumps({"success": True}))

    def serve(self):
        fragments = b""
        while True:
            frame = read_frame(self.conn)
            if frame is None:
                break
            final, opcode, payload = frame
            if opcode == 0x8:
                with self.send_lock:
                    send_frame(self.conn, 0x8, payload[:2])
                break
            if opcode == 0x9:
                with self.send_lock:
                    send_frame(self.conn, 0xA, payload)
                continue
            if opcode in (0x1, 0x2, 0x0):
                fragments += payload
                if not final:
                    continue
                data, fragments = fragments, b""
                try:
                    message = json.loads(data)
                except ValueError:
                    self.log.write("in", raw=data.decode("utf-8", "replace"))
                    continue
                self.log.write("in", message=message)
                if "id" in message and "method" in message:
                    result = self.answer(message)
                    if result == "hold":
                        continue
                    if result is None:
                        self.send({"jsonrpc": "2.0", "id": message["id"], "error": {
                            "code": -32601, "message": f"method not found: {message['method']}"}})
                    else:
                        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        self.log.write("closed")


def handshake(conn, log, token):
    """Reads the HTTP upgrade; answers 101, or 401/403 and returns False."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return False
        data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {}
    for line in head[1:]:
        key, _, value = line.partition(":")
        headers[key.strip()] = value.strip()
    lower = {k.lower(): v for k, v in headers.items()}
    log.write("upgrade", request=head[0], headers=headers)
    if "origin" in lower:
        conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        return False
    if lower.get("x-claude-code-ide-authorization") != token:
        conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
        return False
    accept = base64.b64encode(hashlib.sha1(
        (lower.get("sec-websocket-key", "") + WS_GUID).encode()).digest()).decode()
    response = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n")
    if "mcp" in [p.strip() for p in lower.get("sec-websocket-protocol", "").split(",")]:
        response += "Sec-WebSocket-Protocol: mcp\r\n"
    conn.sendall((response + "\r\n").encode())
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", required=True, help="Claude Code's HOME (for the lock file)")
    parser.add_argument("--workspace", required=True, help="the workspace folder to announce")
    parser.add_argument("--log", required=True, help="JSON-lines log of everything seen")
    parser.add_argument("--port-file", help="the chosen port is written here")
    parser.add_argument("--open-diff", choices=["accept", "modify", "reject", "close", "hold"],
                        default="accept")
    parser.add_argument("--no-lock", action="store_true", help="write no lock file")
    parser.add_argument("--select-first-line", metavar="FILE",
                        help="after the handshake, notify selection_changed for FILE's first line")
    parser.add_argument("--ide-name", default="Fake IDE")
    options = parser.parse_args()
    options.workspace = os.path.abspath(options.workspace)

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    token = secrets.token_hex(16)
    log = Log(options.log)
    lock_path = os.path.join(options.home, ".claude", "ide", f"{port}.lock")
    if not options.no_lock:
        os.makedirs(os.path.dirname(lock_path), exist_ok=True)
        with open(lock_path, "w") as f:
            json.dump({"pid": os.getpid(), "workspaceFolders": [options.workspace],
                       "ideName": options.ide_name, "transport": "ws", "authToken": token}, f)
    log.write("listening", port=port, lock=None if options.no_lock else lock_path, token=token)
    if options.port_file:
        with open(options.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(options.port_file + ".tmp", options.port_file)

    def shutdown(*_):
        if not options.no_lock and os.path.exists(lock_path):
            os.unlink(lock_path)
        os._exit(0)

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)

    def client(conn):
        with conn:
            if handshake(conn, log, token):
                Connection(conn, log, options).serve()

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=client, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
