#!/usr/bin/env python3
"""Scripted models for Codex (OpenAI Responses API) and Gemini CLI (Gemini API), the
siblings of model_server.py (Anthropic), for end-to-end tests of the real CLIs
(Python 3.11 standard library only).

    python3 model_protocols.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORTFILE

It binds 127.0.0.1 on a free port, writes the port to PORTFILE (whole, then
renamed) and serves until SIGTERM, answering both APIs:

- POST .../v1/responses (Codex, `wire_api = "responses"`): an SSE stream of
  response.created, per item response.output_item.added (+ response.output_text.delta
  for a message) and response.output_item.done, then response.completed with usage.
- POST .../models/MODEL:streamGenerateContent?alt=sse (Gemini CLI): `data:` events,
  each a GenerateContentResponse; the last carries finishReason STOP and usage.
- POST .../models/MODEL:generateContent (Gemini CLI's router, once per prompt, and
  any other one-shot call): a JSON GenerateContentResponse whose text is
  {"complexity_reasoning", "complexity_score"}; it does not consume the script.
- POST .../chat/completions with `stream: true` (OpenAI Chat Completions, as Qwen
  Code, opencode, GitHub Copilot CLI and Factory Droid speak it): SSE
  `chat.completion.chunk` events (text, then `tool_calls`; a "custom_tool_call" step
  is a `"type": "custom"` call whose `custom.input` is text, as Copilot's
  apply_patch), a last one with `finish_reason` and usage, then `data: [DONE]`.
  Without `stream` (a side call) a JSON completion whose text is `{}`, and a
  streamed request that offers no tools (opencode's title) the text "Scripted
  task"; neither consumes the script.
- anything else: 200 {} (logged, kind "other").

The script is a JSON list of steps (or {"steps": [...]}); each is the model's reply
to the next main request (a Responses or streamGenerateContent call):

    [
      {"tool_call": {"name": "str_replace", "input": {...}}},
      {"expect": "applied", "text": "Done."}
    ]

- "text": a message; "tool_call": one call or a list ({"name", "input"}; for Codex
  also "namespace", e.g. "mcp__verbatim"); "custom_tool_call": Codex's freeform tool
  ({"name": "apply_patch", "input": "*** Begin Patch..."}); "items": Codex output
  items sent as they are. Call ids are call_01, call_02, ... in order.
- "expect": substring(s) the tool outputs in the request must contain (Codex:
  the function_call_output / custom_tool_call_output items after the last
  assistant turn; Gemini: the functionResponse parts of the last user turn, as
  JSON). A mismatch is logged ({"event": "expect_mismatch", ...}), printed to
  stderr and listed by GET /__harness/status; the step is played anyway.
- "comment": ignored.

When the script is exhausted every main request gets the text "done".

Log: one JSON line per request, {seq, time, method, path, kind (responses, responses_side (a structured side request such as the Codex TUI's thread title, answered off the script),
gemini_stream, gemini_generate, other), step, headers, body}, plus event lines.
"""

import argparse
import http.server
import json
import os
import signal
import sys
import threading
import time

EXHAUSTED_REPLY = "done"
STEP_KEYS = {"text", "tool_call", "custom_tool_call", "items", "expect", "comment"}


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
        unknown = set(step) - STEP_KEYS
        if unknown:
            raise SystemExit(f"{path}: step {index} has unknown keys {sorted(unknown)}")
    return script


def classify(path):
    route = path.split("?", 1)[0]
    if route.endswith("/responses"):
        return "responses"
    if route.endswith(":streamGenerateContent"):
        return "gemini_stream"
    if route.endswith(":generateContent"):
        return "gemini_generate"
    if route.endswith("/chat/completions"):
        return "chat"
    return "other"


def responses_outputs(body):
    """The tool outputs Codex sends back: the *_call_output items after the last assistant item."""
    items = body.get("input") or []
    outputs = []
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, (dict, list)):
                output = json.dumps(output)
            outputs.append(str(output))
        elif item.get("role") == "user" and item.get("type", "message") == "message":
            break
    return "\n".join(reversed(outputs))


def gemini_outputs(body):
    """The functionResponse parts of the last user turn, as JSON."""
    for content in reversed(body.get("contents") or []):
        if content.get("role") != "user":
            continue
        parts = [p["functionResponse"] for p in content.get("parts") or [] if "functionResponse" in p]
        return "\n".join(json.dumps(part) for part in parts)
    return ""


def chat_outputs(body):
    """The tool messages after the last assistant message (OpenAI Chat Completions)."""
    outputs = []
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "tool":
            content = message.get("content")
            outputs.append(content if isinstance(content, str) else json.dumps(content))
        elif message.get("role") in ("assistant", "user"):
            break
    return "\n".join(reversed(outputs))


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def is_structured_side_request(body):
    """A Responses request that asks for JSON of a schema (the Codex TUI's thread title),
    not a turn of the conversation."""
    text = body.get("text") if isinstance(body, dict) else None
    return isinstance(text, dict) and isinstance(text.get("format"), dict) and text["format"].get("type") == "json_schema"


class Model:
    def __init__(self, script, log_path):
        self.script = script
        self.log_path = log_path
        self.lock = threading.Lock()
        self.next_step = 0
        self.next_call = 1
        self.seq = 0
        self.main_requests = 0
        self.mismatches = []

    def log(self, record):
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def call_id(self):
        call_id = f"call_{self.next_call:02d}"
        self.next_call += 1
        return call_id

    def record(self, method, path, headers, body):
        """Logs a request; for a main request, takes the step that answers it."""
        with self.lock:
            self.seq += 1
            kind = classify(path)
            step_index = None
            step = None
            if kind == "chat" and not (isinstance(body, dict) and body.get("stream")):
                kind = "chat_side"
            elif kind == "chat" and not body.get("tools"):
                # A streamed request with no tools (opencode's title): answered off the script.
                kind = "chat_side_stream"
                step = {"text": "Scripted task"}
            if kind == "responses" and is_structured_side_request(body):
                # The Codex TUI's thread title: answered off the script.
                kind = "responses_side"
                step = {"text": json.dumps({"title": "Scripted task"})}
            if kind in ("responses", "gemini_stream", "chat"):
                self.main_requests += 1
                if self.next_step < len(self.script):
                    step_index = self.next_step
                    self.next_step += 1
                    step = self.script[step_index]
                    got = {"responses": responses_outputs, "chat": chat_outputs}.get(kind, gemini_outputs)(body)
                    self.check(step_index, step, got)
                else:
                    step = {"text": EXHAUSTED_REPLY}
            self.log({"seq": self.seq, "time": round(time.time(), 3), "method": method, "path": path,
                      "kind": kind, "step": step_index, "headers": dict(headers), "body": body})
            ids = None
            if step is not None:
                ids = [self.call_id() for _ in as_list(step.get("tool_call")) + as_list(step.get("custom_tool_call"))]
            return self.seq, kind, step, ids

    def check(self, index, step, got):
        expected = step.get("expect")
        if expected is None:
            return
        missing = [w for w in as_list(expected) if w not in got]
        if missing:
            mismatch = {"event": "expect_mismatch", "step": index, "missing": missing, "tool_results": got}
            self.mismatches.append(mismatch)
            self.log(mismatch)
            print(f"model_protocols: step {index} expected tool output to contain {missing!r}, got {got!r}",
                  file=sys.stderr, flush=True)

    def status(self):
        with self.lock:
            return {"steps_total": len(self.script), "steps_played": self.next_step,
                    "main_requests": self.main_requests, "mismatches": list(self.mismatches)}


def responses_events(seq, step, ids):
    """The Responses API stream for one step."""
    response_id = f"resp_{seq:04d}"
    items = []
    if step.get("text"):
        items.append({"type": "message", "id": f"msg_{seq:04d}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": step["text"], "annotations": []}]})
    ids = list(ids)
    for call in as_list(step.get("tool_call")):
        item = {"type": "function_call", "id": f"fc_{ids[0]}", "call_id": ids[0], "name": call["name"],
                "arguments": json.dumps(call.get("input", {})), "status": "completed"}
        if call.get("namespace"):
            item["namespace"] = call["namespace"]
        items.append(item)
        ids.pop(0)
    for call in as_list(step.get("custom_tool_call")):
        items.append({"type": "custom_tool_call", "id": f"ctc_{ids[0]}", "call_id": ids[0], "name": call["name"],
                      "input": call["input"], "status": "completed"})
        ids.pop(0)
    items.extend(as_list(step.get("items")))
    base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": "scripted",
            "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": base}
    for index, item in enumerate(items):
        added = dict(item)
        if item["type"] == "message":
            added = {**item, "status": "in_progress", "content": []}
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                             "item": added}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                 "output_index": index, "content_index": 0, "delta": text}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                            "item": item}
    done = {**base, "status": "completed", "output": items,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}
    yield "response.completed", {"type": "response.completed", "response": done}


def gemini_chunks(step):
    """The streamGenerateContent events for one step."""
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    chunks = []
    if step.get("text"):
        chunks.append([{"text": step["text"]}])
    calls = [{"functionCall": {"name": call["name"], "args": call.get("input", {})}}
             for call in as_list(step.get("tool_call"))]
    if calls:
        chunks.append(calls)
    if not chunks:
        chunks.append([{"text": ""}])
    for index, parts in enumerate(chunks):
        candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
        event = {"candidates": [candidate], "modelVersion": "scripted"}
        if index == len(chunks) - 1:
            candidate["finishReason"] = "STOP"
            event["usageMetadata"] = usage
        yield event


def chat_chunks(seq, step, ids):
    """The Chat Completions stream for one step."""
    base = {"id": f"chatcmpl_{seq:04d}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": "scripted"}
    def chunk(delta, finish=None, **extra):
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    yield chunk({"role": "assistant", "content": step.get("text") or ""})
    calls = as_list(step.get("tool_call"))
    for index, (call, call_id) in enumerate(zip(calls, ids)):
        yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": {
            "name": call["name"], "arguments": json.dumps(call.get("input", {}))}}]})
    # A free-form tool (GitHub Copilot CLI's apply_patch for GPT models): the input is text.
    customs = as_list(step.get("custom_tool_call"))
    for index, (call, call_id) in enumerate(zip(customs, ids[len(calls):]), start=len(calls)):
        yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "custom", "custom": {
            "name": call["name"], "input": call["input"]}}]})
    calls = calls + customs
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    yield chunk({}, "tool_calls" if calls else "stop", usage=usage)


def make_handler(model):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

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

        def start_sse(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

        def do_GET(self):
            if self.path.startswith("/__harness/status"):
                self.send_json(200, model.status())
                return
            model.record("GET", self.path, self.headers, None)
            self.send_json(200, {})

        def do_POST(self):
            body = self.read_body()
            seq, kind, step, ids = model.record("POST", self.path, self.headers, body)
            if kind in ("responses", "responses_side"):
                self.start_sse()
                for event, data in responses_events(seq, step, ids):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            elif kind == "gemini_stream":
                self.start_sse()
                for data in gemini_chunks(step):
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            elif kind in ("chat", "chat_side_stream"):
                self.start_sse()
                for data in chat_chunks(seq, step, ids):
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            elif kind == "chat_side":
                self.send_json(200, {"id": f"chatcmpl_{seq:04d}", "object": "chat.completion", "created": int(time.time()),
                                     "model": "scripted", "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": "{}"}}],
                                     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            elif kind == "gemini_generate":
                verdict = json.dumps({"complexity_reasoning": "a scripted task", "complexity_score": 1})
                self.send_json(200, {"candidates": [{"content": {"role": "model", "parts": [{"text": verdict}]},
                                                     "finishReason": "STOP", "index": 0}],
                                     "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                                       "totalTokenCount": 2}})
            else:
                self.send_json(200, {})

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
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
