#!/usr/bin/env python3
"""A scripted Anthropic Messages API server that plays the model for a real
Claude Code CLI in end-to-end tests (Python 3.11 standard library only).

    python3 model_server.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORTFILE

It binds 127.0.0.1 on a free port, writes the port number to PORTFILE (written
whole, then renamed, so a reader never sees half of it) and serves until it is
killed (SIGTERM or SIGINT).

The script is a JSON list of steps (or an object with a "steps" list). Each
step is the model's reply to the next request of Claude Code's main agent
loop:

    [
      {"tool_use": {"name": "Write", "input": {"file_path": "/p/hello.txt", "content": "hi\\n"}}},
      {"expect": "created successfully", "text": "I wrote hello.txt."}
    ]

- "text": a text block; "tool_use": one tool call or a list of them
  ({"name", "input"}; the id is generated: toolu_01, toolu_02, ... in the order
  they are sent). Text comes first, then the tool calls. "content" may instead
  give the whole list of blocks ({"type": "text", "text"} or
  {"type": "tool_use", "name", "input"}).
- "expect": a substring (or a list of them) that the tool_result blocks of the
  request this step answers must contain (all of them, joined). A mismatch is
  logged as {"event": "expect_mismatch", ...}, printed to stderr, counted in
  GET /__harness/status, and the step is played all the same.
- "stop_reason": overrides the default (tool_use when the step calls a tool,
  else end_turn).
- "comment": ignored, for the reader of the script.

When the script is exhausted every main-loop request gets the text "done" with
end_turn.

Claude Code may also send side requests (without
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, a session title on the small model).
The main loop's requests carry the tool list (`tools`); side requests carry
none (README.md has what was seen). Side requests get the text "ok" and never
consume the script.

Every request is appended to the log as one JSON line:
{"seq", "time", "method", "path", "kind" (main, side, count_tokens, other),
 "step" (the script index played, or null), "headers", "body"}.
Harness events (expect mismatches) are lines with an "event" key.

GET /__harness/status answers {"steps_total", "steps_played", "main_requests",
"side_requests", "mismatches": [...]} for tests that want to poll.
"""

import argparse
import http.server
import json
import os
import signal
import sys
import threading
import time

SIDE_REPLY = "ok"
EXHAUSTED_REPLY = "done"
MODEL = "claude-scripted"


def load_script(path):
    with open(path, encoding="utf-8") as f:
        script = json.load(f)
    if isinstance(script, dict):
        script = script.get("steps", [])
    if not isinstance(script, list):
        raise SystemExit(f"{path}: expected a list of steps or {{\"steps\": [...]}}")
    for index, step in enumerate(script):
        if not isinstance(step, dict):
            raise SystemExit(f"{path}: step {index} is not an object")
        unknown = set(step) - {"text", "tool_use", "content", "expect", "stop_reason", "comment"}
        if unknown:
            raise SystemExit(f"{path}: step {index} has unknown keys {sorted(unknown)}")
    return script


def tool_results_text(body):
    """The text of the tool_result blocks in the last user message of a request."""
    messages = body.get("messages") or []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            return ""
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    parts.append(inner)
                elif isinstance(inner, list):
                    parts.extend(b.get("text", "") for b in inner if isinstance(b, dict))
        return "\n".join(parts)
    return ""


def classify(path, body):
    """main, side, count_tokens or other. See README.md: the main loop sends its tools."""
    route = path.split("?", 1)[0]
    if route.endswith("/v1/messages/count_tokens"):
        return "count_tokens"
    if route.endswith("/v1/messages"):
        return "main" if body.get("tools") else "side"
    return "other"


class Model:
    """The script and its progress; one lock guards both, as requests run on threads."""

    def __init__(self, script, log_path):
        self.script = script
        self.log_path = log_path
        self.lock = threading.Lock()
        self.next_step = 0
        self.next_tool_id = 1
        self.seq = 0
        self.main_requests = 0
        self.side_requests = 0
        self.mismatches = []

    def log(self, record):
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def record(self, method, path, headers, body):
        """Logs a request and, for the main loop, takes the step that answers it."""
        with self.lock:
            self.seq += 1
            kind = classify(path, body if isinstance(body, dict) else {})
            step_index = None
            blocks = None
            stop_reason = "end_turn"
            if kind == "main":
                self.main_requests += 1
                if self.next_step < len(self.script):
                    step_index = self.next_step
                    self.next_step += 1
                    blocks, stop_reason = self.play(step_index, body)
                else:
                    blocks = [{"type": "text", "text": EXHAUSTED_REPLY}]
            elif kind == "side":
                self.side_requests += 1
                blocks = [{"type": "text", "text": SIDE_REPLY}]
            self.log({"seq": self.seq, "time": round(time.time(), 3), "method": method,
                      "path": path, "kind": kind, "step": step_index,
                      "headers": dict(headers), "body": body})
            return self.seq, kind, blocks, stop_reason

    def play(self, index, body):
        """The content blocks of step `index`; checks its expectation (lock held)."""
        step = self.script[index]
        expected = step.get("expect")
        if expected is not None:
            wanted = [expected] if isinstance(expected, str) else list(expected)
            got = tool_results_text(body)
            missing = [w for w in wanted if w not in got]
            if missing:
                mismatch = {"event": "expect_mismatch", "step": index, "missing": missing,
                            "tool_results": got}
                self.mismatches.append(mismatch)
                self.log(mismatch)
                print(f"model_server: step {index} expected tool_result to contain "
                      f"{missing!r}, got {got!r}", file=sys.stderr, flush=True)
        if "content" in step:
            source = step["content"]
        else:
            source = []
            if step.get("text"):
                source.append({"type": "text", "text": step["text"]})
            calls = step.get("tool_use") or []
            if isinstance(calls, dict):
                calls = [calls]
            source.extend({"type": "tool_use", **call} for call in calls)
        blocks = []
        for block in source:
            if block.get("type") == "tool_use":
                blocks.append({"type": "tool_use", "id": f"toolu_{self.next_tool_id:02d}",
                               "name": block["name"], "input": block.get("input", {})})
                self.next_tool_id += 1
            else:
                blocks.append({"type": "text", "text": block.get("text", "")})
        uses_tool = any(b["type"] == "tool_use" for b in blocks)
        return blocks, step.get("stop_reason", "tool_use" if uses_tool else "end_turn")

    def status(self):
        with self.lock:
            return {"steps_total": len(self.script), "steps_played": self.next_step,
                    "main_requests": self.main_requests, "side_requests": self.side_requests,
                    "mismatches": list(self.mismatches)}


def sse_events(message_id, blocks, stop_reason):
    """The Messages API stream for one reply, as (event, data) pairs."""
    yield "message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            payload = json.dumps(block["input"])
            # Split the arguments as the real API does, so partial_json is exercised.
            pieces = [payload[i:i + 40] for i in range(0, len(payload), 40)] or ["{}"]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        else:
            start = {"type": "text", "text": ""}
            text = block["text"]
            pieces = [text[i:i + 40] for i in range(0, len(text), 40)] or [""]
            deltas = [{"type": "text_delta", "text": p} for p in pieces]
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": start}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def make_handler(model):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass  # Every request is in the JSON log; stderr stays for mismatches.

        def read_body(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return {}
            try:
                return json.loads(raw)
            except ValueError:
                return {"_raw": raw.decode("utf-8", "replace")}

        def send_json(self, status, value):
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.startswith("/__harness/status"):
                self.send_json(200, model.status())
                return
            model.record("GET", self.path, self.headers, None)
            self.send_json(200, {})

        def do_HEAD(self):
            model.record("HEAD", self.path, self.headers, None)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            body = self.read_body()
            seq, kind, blocks, stop_reason = model.record("POST", self.path, self.headers, body)
            if kind == "count_tokens":
                self.send_json(200, {"input_tokens": 10})
                return
            if kind == "other":
                self.send_json(200, {})
                return
            message_id = f"msg_{seq:04d}"
            if not body.get("stream"):
                self.send_json(200, {
                    "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
                    "content": blocks, "stop_reason": stop_reason, "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for event, data in sse_events(message_id, blocks, stop_reason):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        do_PUT = do_POST
        do_PATCH = do_POST
        do_DELETE = do_GET

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, help="JSON list of model steps")
    parser.add_argument("--log", required=True, help="JSON-lines file; every request is appended")
    parser.add_argument("--port-file", required=True, help="the chosen port is written here")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    args = parser.parse_args()

    model = Model(load_script(args.script), args.log)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(model))
    server.daemon_threads = True
    partial = args.port_file + ".tmp"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(f"{server.server_address[1]}\n")
    os.replace(partial, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    main()
