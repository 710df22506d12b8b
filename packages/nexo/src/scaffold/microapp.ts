/**
 * What `nexo microapp new` writes: a working microapp with one tool, `<prefix>_agents`, that lists
 * the daemon's agents through the admin RPC — so its plugin.toml declares the capability it needs
 * (`[capabilities.admin] required = ["agents_crud"]`) — and a test. In TypeScript it is written with
 * nexo-plugin-sdk/microapp and tested against a real daemon with nexo-plugin-sdk/microapp/testing;
 * in Python (standard library only) it speaks the protocol by hand, as examples/microapps/python-notes
 * does, and its test plays the daemon's side over stdio. Both pass `nexo microapp check` as written.
 */
import type { MicroappLanguage } from "./choices.js";
import { SDK_PACKAGE } from "./sdk-source.js";

/** The capability the scaffold's tool needs. */
export const SCAFFOLD_CAPABILITY = "agents_crud";

/** An extension id: 1-32 of a-z, 0-9, `_`, `-`, starting with a letter (`My Notes` → `my-notes`). */
export function microappIdOf(name: string): string | undefined {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "");
  return /^[a-z][a-z0-9_-]{0,31}$/.test(id) ? id : undefined;
}

/** A microapp's tools are named `<id with - as _>_<tool>`. */
export function toolPrefixOf(id: string): string {
  return id.replace(/-/g, "_");
}

/** The executable extensions.yaml points at, relative to the microapp's directory. */
export function executableOf(language: MicroappLanguage): string {
  return language === "python" ? "main.py" : "main.mjs";
}

/** Files that must be executable (the daemon and `nexo microapp check` run them directly). */
export const EXECUTABLE_FILES = new Set(["main.py", "main.mjs"]);

/** The extensions.yaml entry that enables the microapp at `executable`. */
export function extensionsSnippet(id: string, executable: string): string {
  return `extensions:
  entries:
    ${id}:
      path: ${executable}
      capabilities_grant: [${SCAFFOLD_CAPABILITY}]
`;
}

/** File name → content for a microapp `id`; `sdkSpec` is nexo-plugin-sdk's version spec (TypeScript only). */
export function microappFiles(
  id: string,
  language: MicroappLanguage,
  sdkSpec: string,
): Record<string, string> {
  return language === "python" ? pythonMicroapp(id) : typescriptMicroapp(id, sdkSpec);
}

function manifest(id: string): string {
  return `# The microapp's manifest: nexo reads it before starting the microapp (docs/microapps.md).
[plugin]
id = "${id}"
version = "0.1.0"
name = "${id}"
description = "Lists the daemon's agents (a starting point: replace the tool with your own)"

[capabilities.admin]
# The daemon refuses to start the microapp unless extensions.yaml grants these
# (capabilities_grant). Add what your tools call; "optional" ones may be left ungranted.
required = ["${SCAFFOLD_CAPABILITY}"]
optional = []
`;
}

function readme(id: string, language: MicroappLanguage, commands: string[]): string {
  return `# ${id}

A nexo microapp made by \`nexo microapp new\`. It offers one tool, \`${toolPrefixOf(id)}_agents\`,
which lists the daemon's agents through the admin RPC (capability \`${SCAFFOLD_CAPABILITY}\`).

\`\`\`sh
${commands.join("\n")}
\`\`\`

To run it in your daemon, add it to the config directory's extensions.yaml (the path may be
relative to the config directory) and restart or reload the daemon:

\`\`\`yaml
${extensionsSnippet(id, `/path/to/this/directory/${executableOf(language)}`)}\`\`\`
`;
}

function typescriptMicroapp(id: string, sdkSpec: string): Record<string, string> {
  const tool = `${toolPrefixOf(id)}_agents`;
  return {
    "plugin.toml": manifest(id),
    "package.json": `${JSON.stringify(
      {
        name: `nexo-microapp-${id.replace(/_/g, "-")}`,
        version: "0.1.0",
        private: true,
        type: "module",
        scripts: { build: "tsc", test: "npm run build && node --test dist/" },
        dependencies: { [SDK_PACKAGE]: sdkSpec },
        // ws: the test reaches the daemon's AppServer door (an optional peer of the SDK).
        devDependencies: { typescript: "~5.9.3", "@types/node": "^20.19.0", ws: "^8.18.0" },
      },
      null,
      2,
    )}\n`,
    "tsconfig.json": `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          outDir: "dist",
          rootDir: ".",
          skipLibCheck: true,
          types: ["node"],
        },
        include: ["main.ts", "main.test.ts"],
      },
      null,
      2,
    )}\n`,
    "main.mjs": `#!/usr/bin/env node
// The executable extensions.yaml points at: the compiled microapp (\`npm run build\` writes dist/).
import "./dist/main.js";
`,
    "main.ts": `/**
 * The ${id} microapp: one tool, ${tool}, served with nexo-plugin-sdk/microapp. The daemon runs
 * main.mjs (which loads the compiled dist/main.js) and speaks JSON-RPC with it over stdio; the SDK
 * answers initialize, tools/list, tools/call and shutdown, and types every admin call.
 */
import { Microapp } from "${SDK_PACKAGE}/microapp";

const app = new Microapp({ id: "${id}", version: "0.1.0" });

app.tool({
  name: "${tool}",
  description: "List the ids of the daemon's agents",
  inputSchema: { type: "object", properties: {} },
  // Needs the ${SCAFFOLD_CAPABILITY} grant (plugin.toml requires it); without it the call is refused
  // and the agent reads why.
  handler: async (_args, { admin }) => ({
    agents: (await admin.agents.list({})).agents.map((agent) => agent.id),
  }),
});

await app.run();
`,
    "main.test.ts": `/** The microapp in a real nexo daemon: an agent calls its tool. npm test (needs \`nexo\`, see README). */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { startTestDaemon, type TestDaemon } from "${SDK_PACKAGE}/microapp/testing";

let daemon: TestDaemon;
before(async () => {
  daemon = await startTestDaemon({
    microapps: {
      "${id}": {
        path: fileURLToPath(new URL("../main.mjs", import.meta.url)),
        grants: ["${SCAFFOLD_CAPABILITY}"],
      },
    },
  });
});
after(() => daemon?.stop());

test("an agent lists the daemon's agents through the tool", async () => {
  const call = await daemon.callTool("${tool}", {});
  assert.equal(call.success, true, call.text);
  // The test daemon's one agent is "tester".
  assert.deepEqual(JSON.parse(call.text), { agents: ["tester"] });
});
`,
    ".gitignore": "node_modules/\ndist/\n",
    "README.md": readme(id, "ts", [
      "npm install && npm test      # build, then the test against a real daemon",
      "nexo microapp check .        # nexo's conformance check",
      `nexo microapp call . ${tool}`,
    ]).concat(`
The test starts the \`nexo\` CLI: \`$NEXO_CLI\`, else \`node_modules/.bin/nexo\` in this directory or a
parent, else \`nexo\` on PATH. (Not \`npm install nexo\`: that name on the npm registry is another
package. Install nexo from its clone or its packed tarball, as nexo's docs/getting-started.md says.)
`),
  };
}

function pythonMicroapp(id: string): Record<string, string> {
  const tool = `${toolPrefixOf(id)}_agents`;
  return {
    "plugin.toml": manifest(id),
    "main.py": `#!/usr/bin/env python3
"""The ${id} microapp: one tool, ${tool}, in plain Python (standard library only).

The daemon runs this file and speaks JSON-RPC 2.0 with it over stdin/stdout: one JSON object per
line, each line flushed; logs go to stderr. The daemon asks initialize, tools/list, tools/call and
shutdown (anything else is answered -32601); the microapp asks the daemon nexo/admin/* methods,
each allowed only when extensions.yaml grants its capability (else error -32004).
"""
import json
import queue
import sys
import threading
import time
import uuid

VERSION = "0.1.0"
ADMIN_TIMEOUT_S = 10  # how long an admin call may take before the tool gives up

TOOLS = [
    {
        "name": "${tool}",
        "description": "List the ids of the daemon's agents",
        "input_schema": {"type": "object", "properties": {}},
    }
]

inbox = queue.Queue()  # frames from the daemon; a thread fills it so a wait can time out
backlog = []  # daemon frames that arrived while we waited for the answer to one of our calls


def log(level, message):
    print(f"[{level}] ${id}: {message}", file=sys.stderr, flush=True)


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\\n")
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
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class ToolFailure(Exception):
    """The tool ran and failed: the agent reads the message ({"error": ...})."""


def admin(method, params):
    """One nexo/admin/* call (id "app:<uuid>"); a refusal becomes a failure the agent can read."""
    request_id = "app:" + str(uuid.uuid4())
    send({"jsonrpc": "2.0", "id": request_id, "method": "nexo/admin/" + method, "params": params})
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while True:
        try:
            frame = inbox.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            raise ToolFailure(f"{method}: no answer from the daemon within {ADMIN_TIMEOUT_S} s")
        if frame is None:
            sys.exit(0)
        if frame.get("id") == request_id and "method" not in frame:
            if "error" not in frame:
                return frame.get("result")
            error = frame["error"]
            data = error.get("data")
            if error.get("code") == -32004 and isinstance(data, dict) and "capability" in data:
                raise ToolFailure(f"not allowed: the operator has not granted {data['capability']}")
            raise ToolFailure(f"{method} failed: {error.get('message')}")
        backlog.append(frame)  # a daemon request or notification: served after this call


def call_tool(tool, args):
    if tool == "${tool}":
        return {"agents": [agent["id"] for agent in admin("agents/list", {})["agents"]]}
    raise RpcError(-32602, f"unknown tool: {tool}")


def handle_request(method, params):
    if method == "initialize":
        log("INFO", f"initialized as {params['extension_id']}")
        return {"tools": TOOLS, "version": VERSION}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        try:
            return {"output": call_tool(params["tool"], params.get("args") or {})}
        except ToolFailure as failure:
            return {"error": str(failure)}
    if method == "shutdown":
        return {"ok": True}
    raise RpcError(-32601, f"method not found: {method}")


def main():
    threading.Thread(target=read_stdin, daemon=True).start()
    while True:
        frame = backlog.pop(0) if backlog else inbox.get()
        if frame is None:
            return  # stdin closed
        method = frame.get("method")
        if not isinstance(method, str) or "id" not in frame:
            continue  # a stale answer, or a notification (none needs handling here)
        try:
            send({"jsonrpc": "2.0", "id": frame["id"], "result": handle_request(method, frame.get("params") or {})})
        except RpcError as error:
            send({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": error.code, "message": error.message}})
        except Exception as error:  # a bug here must not kill the microapp
            log("ERROR", f"{method} failed: {error!r}")
            send({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32099, "message": str(error)}})
        if method == "shutdown":
            return


if __name__ == "__main__":
    main()
`,
    "test_main.py": `"""Starts main.py as the daemon does and plays the daemon's side: python3 -m unittest"""

import json
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


class MicroappTest(unittest.TestCase):
    def setUp(self):
        self.app = subprocess.Popen(
            [sys.executable, "main.py"], cwd=HERE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def tearDown(self):
        if self.app.poll() is None:
            self.app.kill()
        self.app.stdin.close()
        self.app.stdout.close()
        self.app.wait()

    def write(self, frame):
        self.app.stdin.write(json.dumps({"jsonrpc": "2.0", **frame}) + "\\n")
        self.app.stdin.flush()

    def read(self):
        return json.loads(self.app.stdout.readline())

    def test_the_tool_asks_the_daemon_and_a_refusal_reaches_the_agent(self):
        self.write({"id": 1, "method": "initialize", "params": {"extension_id": "${id}", "state_dir": str(HERE)}})
        self.assertEqual([t["name"] for t in self.read()["result"]["tools"]], ["${tool}"])

        self.write({"id": 2, "method": "tools/call", "params": {"tool": "${tool}", "args": {}}})
        ask = self.read()  # the microapp's own call to the daemon
        self.assertEqual(ask["method"], "nexo/admin/agents/list")
        self.write({"id": ask["id"], "result": {"agents": [{"id": "ana"}, {"id": "bob"}]}})
        self.assertEqual(self.read(), {"jsonrpc": "2.0", "id": 2, "result": {"output": {"agents": ["ana", "bob"]}}})

        self.write({"id": 3, "method": "tools/call", "params": {"tool": "${tool}", "args": {}}})
        ask = self.read()
        refused = {"code": -32004, "message": "capability not granted", "data": {"capability": "${SCAFFOLD_CAPABILITY}"}}
        self.write({"id": ask["id"], "error": refused})
        self.assertEqual(self.read()["result"], {"error": "not allowed: the operator has not granted ${SCAFFOLD_CAPABILITY}"})

        self.write({"id": 4, "method": "no/such_method"})
        self.assertEqual(self.read()["error"]["code"], -32601)
        self.write({"id": 5, "method": "shutdown"})
        self.assertEqual(self.read()["result"], {"ok": True})
        self.assertEqual(self.app.wait(timeout=5), 0)


if __name__ == "__main__":
    unittest.main()
`,
    "README.md": readme(id, "python", [
      "python3 -m unittest          # the microapp's own test (it plays the daemon)",
      "nexo microapp check .        # nexo's conformance check",
      `nexo microapp call . ${tool}`,
    ]),
  };
}
