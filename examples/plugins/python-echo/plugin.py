#!/usr/bin/env python3
"""A nexo plugin in plain Python: the plugin contract implemented by hand, standard library only.

The contract is small enough to speak directly: newline-delimited JSON-RPC 2.0 on stdin/stdout,
one JSON object per line, logs on stderr. This plugin answers

  initialize   -> its manifest (read from nexo-plugin.toml), server_version and tool catalog
  tool.invoke  -> pyecho_echo and pyecho_reverse, with the contract's tool error codes
  shutdown     -> {"ok": true}, then it exits

replies -32601 to any other request, ignores notifications it does not know (broker.event
included: it registers no channel), and never answers a line that is not a JSON-RPC object
(the contract's SDKs log such lines and carry on, and so does this).

Needs Python 3.11+ for tomllib.
"""

import datetime
import json
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    sys.stderr.write("pyecho: Python 3.11 or newer is required (tomllib)\n")
    sys.exit(1)

from pathlib import Path

MANIFEST_PATH = Path(__file__).resolve().parent / "nexo-plugin.toml"
MAX_LINE_BYTES = 1 << 20  # the contract's SDKs accept lines up to 1 MiB
MAX_TEXT_CHARS = 100_000

# Plugin contract error codes (JSON-RPC reserved band and the tool band of section 5.t).
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TOOL_NOT_FOUND = -33401
TOOL_ARGUMENT_INVALID = -33402
TOOL_EXECUTION_FAILED = -33403

TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": MAX_TEXT_CHARS}},
    "required": ["text"],
    "additionalProperties": False,
}

TOOLS = [
    {
        "name": "pyecho_echo",
        "description": "Returns the given text unchanged.",
        "input_schema": TEXT_SCHEMA,
    },
    {
        "name": "pyecho_reverse",
        "description": "Returns the given text reversed, character by character.",
        "input_schema": TEXT_SCHEMA,
    },
]


def log(message):
    """Everything that is not a frame goes to stderr: the daemon keeps its tail for diagnostics."""
    sys.stderr.write(f"pyecho: {message}\n")
    sys.stderr.flush()


def json_default(value):
    # TOML has datetimes and JSON does not: the manifest echo carries them as ISO 8601 strings.
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def send(frame):
    # allow_nan=False: NaN and Infinity are not JSON, and a host would reject the whole line.
    line = json.dumps(frame, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=json_default)
    sys.stdout.buffer.write(line.encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


class RpcFailure(Exception):
    """Raised by a handler to answer with a JSON-RPC error."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def load_manifest():
    with MANIFEST_PATH.open("rb") as handle:
        return tomllib.load(handle)


def handle_initialize(manifest, _params):
    plugin = manifest["plugin"]
    return {
        "manifest": manifest,
        "server_version": f"{plugin['id']}-{plugin['version']}",
        "tools": TOOLS,
    }


def read_text_argument(tool_name, args):
    """The `text` argument, or -33402 with the offending fields as {path, message} details."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        problems = [{"path": "", "message": "the arguments must be a JSON object"}]
    else:
        problems = [
            {"path": f"/{key}", "message": f"is not an argument of {tool_name} (expected text)"}
            for key in args
            if key != "text"
        ]
        text = args.get("text")
        if "text" not in args:
            problems.append({"path": "/text", "message": "is required"})
        elif not isinstance(text, str):
            problems.append({"path": "/text", "message": "must be a string"})
        elif len(text) > MAX_TEXT_CHARS:
            problems.append({"path": "/text", "message": f"must be at most {MAX_TEXT_CHARS} characters"})
    if problems:
        summary = "; ".join(f"{p['path'] or '(arguments)'} {p['message']}" for p in problems)
        raise RpcFailure(TOOL_ARGUMENT_INVALID, f"invalid argument: {tool_name}: {summary}", {"details": problems})
    return text


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "is_error": False}


def handle_tool_invoke(_manifest, params):
    if not isinstance(params, dict):
        raise RpcFailure(INVALID_PARAMS, "tool.invoke params must be an object")
    tool_name = params.get("tool_name")
    if not isinstance(tool_name, str) or tool_name == "":
        raise RpcFailure(INVALID_PARAMS, "tool.invoke params need a non-empty string tool_name")
    if tool_name == "pyecho_echo":
        return text_result(read_text_argument(tool_name, params.get("args")))
    if tool_name == "pyecho_reverse":
        # By code point: a demo, not a grapheme-aware reversal (combining marks move).
        return text_result(read_text_argument(tool_name, params.get("args"))[::-1])
    raise RpcFailure(TOOL_NOT_FOUND, f"tool not found: {tool_name}")


REQUEST_HANDLERS = {
    "initialize": handle_initialize,
    "tool.invoke": handle_tool_invoke,
}


def error_frame(request_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def dispatch(manifest, message):
    """Handles one decoded frame. Returns False once the plugin should stop."""
    method = message.get("method")
    if not isinstance(method, str):
        # A response: this plugin never sends requests, so there is nothing waiting for it.
        log(f"response for unknown request id {message.get('id')!r} dropped")
        return True
    # A null id counts as no id: the contract's hosts never send one, and a reply to it could
    # not be matched anyway.
    request_id = message.get("id")
    params = message.get("params")

    if request_id is None:
        # Notifications get no reply, whatever happens. broker.event lands here too: this plugin
        # registers no channel, so it is never sent one.
        if method != "broker.event":
            log(f"notification {method} ignored")
        return True

    if method == "shutdown":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"ok": True}})
        log("shutdown acknowledged")
        return False

    handler = REQUEST_HANDLERS.get(method)
    if handler is None:
        send(error_frame(request_id, METHOD_NOT_FOUND, f"method not found: {method}"))
        return True
    try:
        send({"jsonrpc": "2.0", "id": request_id, "result": handler(manifest, params)})
    except RpcFailure as failure:
        send(error_frame(request_id, failure.code, failure.message, failure.data))
    except Exception as error:  # a bug in a handler must cost one call, not the plugin
        code = TOOL_EXECUTION_FAILED if method == "tool.invoke" else INTERNAL_ERROR
        log(f"{method} failed: {error!r}")
        send(error_frame(request_id, code, f"execution failed: {error}"))
    return True


def frames(stream):
    """Yields stdin lines without their newline; lines over MAX_LINE_BYTES are skipped whole."""
    while True:
        line = stream.readline(MAX_LINE_BYTES + 2)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) > MAX_LINE_BYTES:
            while line and not line.endswith(b"\n"):
                line = stream.readline(MAX_LINE_BYTES)
            log(f"line over {MAX_LINE_BYTES} bytes dropped")
            continue
        line = line.rstrip(b"\r\n")
        if len(line) > MAX_LINE_BYTES:
            log(f"line over {MAX_LINE_BYTES} bytes dropped")
            continue
        if line.strip():
            yield line


def main():
    manifest = load_manifest()
    log(f"started (contract over stdio, tools: {', '.join(t['name'] for t in TOOLS)})")
    for line in frames(sys.stdin.buffer):
        try:
            message = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            log(f"malformed JSON-RPC line dropped: {error}")
            continue
        if not isinstance(message, dict):
            log("malformed JSON-RPC line dropped: a frame must be a JSON object")
            continue
        if not dispatch(manifest, message):
            return 0
    log("stdin closed; exiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
