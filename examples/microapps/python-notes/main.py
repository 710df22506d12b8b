#!/usr/bin/env python3
"""python-notes: a nexo microapp in one file of standard-library Python (3.8+).

It keeps short notes per account, manages agents through the admin RPC, shares a note with every
agent as a skill, and blocks messages containing words its config forbids. Everything it does is
described in docs/microapps.md ("A microapp in Python").

Tools (names are the extension id with '-' as '_', then '_'):
  python_notes_add {text}           save a note for the calling account
  python_notes_list {}              the calling account's notes
  python_notes_agents {}            the agents' ids           (admin: agents/list, agents_crud)
  python_notes_create_agent {id}    create or update an agent (admin: agents/upsert, agents_crud)
  python_notes_publish {text}       share a note as a skill   (admin: skills/upsert, skills_crud)
Hook:
  before_message                    deny when the text holds a word of config.blocked_words
"""
import json
import os
import queue
import sys
import threading
import time
import uuid

VERSION = "0.1.0"
ADMIN_TIMEOUT_S = 10  # how long an admin call may take before the tool gives up

TOOLS = [
    {
        "name": "python_notes_add",
        "description": "Save a short note for this account",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The note"}},
            "required": ["text"],
        },
    },
    {
        "name": "python_notes_list",
        "description": "List this account's notes",
        "input_schema": {"type": "object", "properties": {}},
    },
    {
        "name": "python_notes_agents",
        "description": "List the ids of the daemon's agents",
        "input_schema": {"type": "object", "properties": {}},
    },
    {
        "name": "python_notes_create_agent",
        "description": "Create (or update) an agent that answers with the notes of its account",
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The new agent's id"}},
            "required": ["id"],
        },
    },
    {
        "name": "python_notes_publish",
        "description": "Share a note with every agent as a skill",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The note to share"}},
            "required": ["text"],
        },
    },
]
HOOKS = ["before_message"]

settings = {"state_dir": None, "config": {}}

# --- the wire: one JSON object per line on stdin and stdout; logs go to stderr -----------------

inbox = queue.Queue()  # frames from the daemon; a thread fills it so waits can time out
backlog = []  # daemon frames that arrived while we waited for the answer to one of our calls


def log(level, message):
    print(f"[{level}] python-notes: {message}", file=sys.stderr, flush=True)


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def read_stdin():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            inbox.put(json.loads(line))
        except json.JSONDecodeError:
            log("WARN", "ignored a line that is not JSON")
    inbox.put(None)  # end of input: the daemon is gone


class RpcError(Exception):
    """A JSON-RPC error, sent to or received from the daemon."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class ToolFailure(Exception):
    """The tool ran and failed: the agent reads the message (`{"error": ...}`)."""


def call_daemon(method, params):
    """One request to the daemon (id "app:<uuid>"); returns its result or raises RpcError."""
    request_id = "app:" + str(uuid.uuid4())
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while True:
        remaining = deadline - time.monotonic()
        try:
            frame = inbox.get(timeout=max(remaining, 0))
        except queue.Empty:
            raise ToolFailure(f"{method}: no answer from the daemon within {ADMIN_TIMEOUT_S} s")
        if frame is None:
            sys.exit(0)
        if frame.get("id") == request_id and "method" not in frame:
            if "error" in frame:
                error = frame["error"]
                raise RpcError(error.get("code"), error.get("message"), error.get("data"))
            return frame.get("result")
        backlog.append(frame)  # a daemon request or notification: served after this call


def admin(method, params):
    """A nexo/admin/* call; a refused capability becomes a failure the agent can read."""
    try:
        return call_daemon("nexo/admin/" + method, params)
    except RpcError as error:
        if error.code == -32004 and isinstance(error.data, dict) and "capability" in error.data:
            raise ToolFailure(f"not allowed: the operator has not granted {error.data['capability']}")
        raise ToolFailure(f"{method} failed: {error.message}")


# --- the notes ------------------------------------------------------------------------------------


def notes_file():
    return os.path.join(settings["state_dir"], "notes.json")


def load_notes():
    try:
        with open(notes_file(), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def save_notes(notes):
    tmp = notes_file() + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(notes, f)
    os.replace(tmp, notes_file())  # atomic: a crash never leaves half a file


def call_tool(tool, args, binding):
    account = binding.get("account_id") or "default"  # the tenant key
    if tool == "python_notes_add":
        text = args.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ToolFailure("text must be a non-empty string")
        notes = load_notes()
        notes.setdefault(account, []).append(text.strip())
        save_notes(notes)
        return {"saved": text.strip(), "count": len(notes[account])}
    if tool == "python_notes_list":
        return {"notes": load_notes().get(account, [])}
    if tool == "python_notes_agents":
        result = admin("agents/list", {})
        return {"agents": [agent["id"] for agent in result["agents"]]}
    if tool == "python_notes_create_agent":
        agent_id = args.get("id")
        model = settings["config"].get("agent_model", {"provider": "scripted", "model": "scripted"})
        detail = admin(
            "agents/upsert",
            {"id": agent_id, "model": model, "system_prompt": "You answer from the notes you are given."},
        )
        return {"created": detail["id"], "model": detail["model"]}
    if tool == "python_notes_publish":
        text = args.get("text") or ""
        name = "note-" + uuid.uuid4().hex[:8]
        admin("skills/upsert", {"name": name, "description": "A note shared by python-notes", "body": text})
        return {"published": name}
    raise RpcError(-32602, f"unknown tool: {tool}")


def before_message(params):
    text = str(params.get("text", "")).lower()
    for word in settings["config"].get("blocked_words", []):
        if word.lower() in text:
            return {"vote": "deny", "reason": f"the message mentions {word!r}"}
    return {"vote": "abstain"}


# --- serving the daemon -----------------------------------------------------------------------


def handle_request(method, params):
    if method == "initialize":
        settings["state_dir"] = params["state_dir"]
        settings["config"] = params.get("config") or {}
        os.makedirs(settings["state_dir"], exist_ok=True)
        log("INFO", f"initialized as {params['extension_id']}")
        return {"tools": TOOLS, "version": VERSION, "hooks": HOOKS}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        try:
            return {"output": call_tool(params["tool"], params.get("args") or {}, params.get("binding_context") or {})}
        except ToolFailure as failure:
            return {"error": str(failure)}
    if method == "hooks/before_message":
        return before_message(params or {})
    if method == "shutdown":
        return {"ok": True}
    raise RpcError(-32601, f"method not found: {method}")


def handle_notification(method, params):
    if method == "agents/updated":
        log("INFO", f"agents now: {', '.join(params.get('agent_ids', []))}")


def main():
    threading.Thread(target=read_stdin, daemon=True).start()
    while True:
        frame = backlog.pop(0) if backlog else inbox.get()
        if frame is None:
            return  # stdin closed
        method = frame.get("method")
        if not isinstance(method, str):
            continue  # an answer nobody waits for any more
        if "id" not in frame:
            handle_notification(method, frame.get("params") or {})
            continue
        try:
            send({"jsonrpc": "2.0", "id": frame["id"], "result": handle_request(method, frame.get("params"))})
        except RpcError as error:
            send({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": error.code, "message": error.message}})
        except Exception as error:  # a bug here must not kill the microapp
            log("ERROR", f"{method} failed: {error!r}")
            send({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32099, "message": str(error)}})
        if method == "shutdown":
            return


if __name__ == "__main__":
    main()
