#!/usr/bin/env python3
"""Prints a real session: the verbatim binary, a scripted editor on its stdio
(accepting every edit whose version matches, as VS Code does after review),
and an agent on its Unix socket doing read -> ambiguous -> occurrence -> applied.

    python3 tests/demo/transcript.py [path/to/verbatim]

tests/run runs it as a smoke test: it exits non-zero if the session does not
go as described.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "target", "debug", "verbatim")
TEXT = "fn main() {\n    let x = 1;\n}\n\nfn other() {\n    let x = 1;\n}\n"


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(stream):
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def show(arrow, message):
    text = json.dumps(message, ensure_ascii=False)
    print(f"{arrow} {text if len(text) < 400 else text[:400] + '…'}")


class Editor:
    """Plays the editor on the server's stdio."""

    def __init__(self, workspace, runtime_dir):
        # The journal goes to the temporary directory too, not the user's state directory.
        # The lock files the agents' IDE protocols find (Claude Code's, Gemini CLI's and
        # Qwen Code's) go there too, not to the user's own folders.
        env = dict(os.environ, VERBATIM_RUNTIME_DIR=runtime_dir, VERBATIM_STATE_DIR=runtime_dir, VERBATIM_LOG="warn",
                   CLAUDE_CONFIG_DIR=os.path.join(runtime_dir, "claude"), TMPDIR=runtime_dir,
                   QWEN_HOME=os.path.join(runtime_dir, "qwen"))
        self.process = subprocess.Popen([BINARY, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.version = 1
        self.text = TEXT
        self.uri = "file://" + os.path.join(workspace, "main.rs")
        self.responses = {}
        self.lock = threading.Lock()
        threading.Thread(target=self.loop, daemon=True).start()
        self.request(1, "initialize", {
            "processId": None, "rootUri": None,
            "clientInfo": {"name": "scripted-editor"},
            "workspaceFolders": [{"uri": "file://" + workspace, "name": "demo"}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                             "workspace": {"workspaceEdit": {"documentChanges": True,
                                                             "changeAnnotationSupport": {}}}}})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": self.uri, "languageId": "rust", "version": 1, "text": TEXT}}})

    def send(self, message):
        with self.lock:
            self.process.stdin.write(frame(message))
            self.process.stdin.flush()

    def request(self, id_, method, params):
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        deadline = time.monotonic() + 60
        while id_ not in self.responses:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise DemoFailed(f"the server did not answer {method} (exit status {self.process.poll()})")
            time.sleep(0.01)
        return self.responses.pop(id_)

    def loop(self):
        while True:
            message = read_frame(self.process.stdout)
            if message is None:
                return
            if message.get("method") == "workspace/applyEdit":
                self.apply(message)
            elif "method" not in message:
                self.responses[message["id"]] = message

    def apply(self, message):
        change = message["params"]["edit"]["documentChanges"][0]
        annotation = next(iter(message["params"]["edit"]["changeAnnotations"].values()))
        print(f"   [editor] review shows {annotation['label']!r}; the person accepts")
        if change["textDocument"]["version"] != self.version:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"applied": False}})
            return
        lines = self.text.split("\n")
        changes = []
        for edit in sorted(change["edits"], key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
            start, end = edit["range"]["start"], edit["range"]["end"]
            offset = lambda p: sum(len(l) + 1 for l in lines[:p["line"]]) + p["character"]  # ASCII text
            self.text = self.text[:offset(start)] + edit["newText"] + self.text[offset(end):]
            lines = self.text.split("\n")
            changes.append({"range": edit["range"], "text": edit["newText"]})
        self.version += 2
        self.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": changes}})
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"applied": True}})


class Agent:
    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.connect(path)
        self.socket.settimeout(60)
        self.stream = self.socket.makefile("rwb")
        self.next_id = 0

    def call(self, method, params, quiet=False):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        if not quiet:
            show("→", {"method": method, "params": params})
        self.stream.write(frame(message))
        self.stream.flush()
        response = read_frame(self.stream)
        if not quiet:
            show("←", response.get("result", response.get("error")))
        return response


class DemoFailed(Exception):
    """The session did not go as described: one line says what happened."""


def result_of(response, what):
    """The result of a response, or DemoFailed naming the request and the error."""
    if response is None:
        raise DemoFailed(f"{what}: the server closed the connection without an answer")
    if "error" in response:
        error = response["error"]
        raise DemoFailed(f"{what} answered {error.get('data', {}).get('kind', error.get('code'))}: {error.get('message')}")
    return response["result"]


def check(condition, message):
    if not condition:
        raise DemoFailed(message)


def session(workspace, runtime_dir):
    with open(os.path.join(workspace, "main.rs"), "w") as file:
        file.write(TEXT)
    editor = Editor(workspace, runtime_dir)
    try:
        discovery_file = next(f for f in os.listdir(runtime_dir) if f.endswith(".json"))
        discovery = json.load(open(os.path.join(runtime_dir, discovery_file)))
        print(f"$ verbatim lsp   (started by the editor; agents connect to {os.path.basename(discovery['socket'])})")
        agent = Agent(discovery["socket"])
        agent.call("initialize", {"processId": None, "rootUri": None, "clientInfo": {"name": "demo-agent"},
                                  "capabilities": {"general": {"positionEncodings": ["utf-8"]}}}, quiet=True)
        agent.stream.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        read = result_of(agent.call("verbatim/read", {"uri": editor.uri}), "verbatim/read")
        # The editor opened main.rs before the agent connected: the server answers
        # after the editor's messages sent before the request (issue 42).
        check(read["source"] == "editor", f"verbatim/read answered from {read['source']}, not from the editor's open buffer")
        edit = {"uri": editor.uri, "oldStr": "let x = 1;", "newStr": "let x = 2;", "baseRev": read["rev"], "summary": "Start at 2"}
        ambiguous = agent.call("verbatim/strReplace", edit)
        check(ambiguous.get("error", {}).get("data", {}).get("kind") == "ambiguous",
              f"a quote found twice was not refused as ambiguous: {ambiguous}")
        applied = result_of(agent.call("verbatim/strReplace", dict(edit, occurrence=2)), "verbatim/strReplace")
        check(applied["applied"] is True, f"the edit was not applied: {applied}")
        check(editor.text == TEXT.replace("other() {\n    let x = 1;", "other() {\n    let x = 2;"),
              f"the editor's buffer does not hold the edit: {editor.text!r}")
        check(open(os.path.join(workspace, "main.rs")).read() == TEXT, "the file on disk changed")
        print("   [check] the buffer holds the edit; the file on disk is untouched")
    finally:
        editor.process.stdin.close()
        editor.process.wait(timeout=10)


def main():
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as runtime_dir:
        try:
            session(workspace, runtime_dir)
        except (DemoFailed, OSError, subprocess.TimeoutExpired, StopIteration) as error:
            what = str(error) or type(error).__name__
            print(f"the demo session failed: {what}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
