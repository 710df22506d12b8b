/**
 * What `nexo plugin new` writes: a working tool plugin with one tool (`<id>_greet`) and a test that
 * starts it as nexo does, in Python (standard library only: the contract spoken by hand) or in
 * TypeScript (nexo-plugin-sdk). Both pass `nexo plugin check` as written.
 */

import type { PluginLanguage } from "./choices.js";
import { SDK_PACKAGE } from "./sdk-source.js";

/** `my-tools` → `my_tools`: a plugin id is a lowercase slug (letters, digits, `_`; 32 at most). */
export function pluginIdOf(name: string): string | undefined {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return /^[a-z][a-z0-9_]{0,31}$/.test(id) ? id : undefined;
}

/**
 * File name → content for a plugin `id`; `sdkSpec` is the package.json version spec of
 * nexo-plugin-sdk (TypeScript only; scaffold/sdk-source.ts).
 */
export function pluginFiles(id: string, language: PluginLanguage, sdkSpec: string): Record<string, string> {
  return language === "python" ? pythonPlugin(id) : typescriptPlugin(id, sdkSpec);
}

function manifest(id: string, command: string, args: string[], comment: string): string {
  return `# The plugin's manifest: nexo reads it before starting the plugin. Every key: nexo's docs/plugins.md.
[plugin]
id = "${id}"
version = "0.1.0"
name = "${id}"
description = "Greets people (a starting point: replace the tool with your own)"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
# ${comment}
command = "${command}"
args = [${args.map((a) => `"${a}"`).join(", ")}]

[plugin.extends]
# Every tool the plugin offers, each named <plugin id>_<tool>.
tools = ["${id}_greet"]
`;
}

function pythonPlugin(id: string): Record<string, string> {
  return {
    "nexo-plugin.toml": manifest(
      id,
      "python3",
      ["plugin.py"],
      "Run from this directory; plugin.py flushes after every line.",
    ),
    "plugin.py": `#!/usr/bin/env python3
"""The ${id} plugin: one tool, ${id}_greet, in plain Python (standard library only).

nexo starts this file and speaks JSON-RPC 2.0 with it over stdin/stdout: one JSON object per
line, each line flushed. Logs go to stderr. Three requests matter:

  initialize   -> {"manifest": ..., "server_version": ..., "tools": [...]}
  tool.invoke  -> {"content": [{"type": "text", "text": ...}], "is_error": false}
  shutdown     -> {"ok": true}, then exit

Any other request is answered -32601; notifications are ignored.
"""

import json
import sys
import tomllib
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent / "nexo-plugin.toml"

TOOLS = [
    {
        "name": "${id}_greet",
        "description": "Greets a person by name.",
        "input_schema": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"],
            "additionalProperties": False,
        },
    }
]


def greet(args):
    name = args.get("name") if isinstance(args, dict) else None
    if not isinstance(name, str) or not name:
        # -33402: the arguments are wrong; the model is told and can try again.
        raise RpcError(-33402, "invalid argument: name must be a non-empty string")
    return {"content": [{"type": "text", "text": f"Hello, {name}!"}], "is_error": False}


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def send(frame):
    sys.stdout.write(json.dumps(frame, ensure_ascii=False) + "\\n")
    sys.stdout.flush()


def answer(request, manifest):
    method = request.get("method")
    if method == "initialize":
        plugin = manifest["plugin"]
        return {"manifest": manifest, "server_version": f"{plugin['id']}-{plugin['version']}", "tools": TOOLS}
    if method == "tool.invoke":
        params = request.get("params") or {}
        if params.get("tool_name") == "${id}_greet":
            return greet(params.get("args"))
        raise RpcError(-33401, f"tool not found: {params.get('tool_name')}")
    raise RpcError(-32601, f"method not found: {method}")


def main():
    with MANIFEST.open("rb") as handle:
        manifest = tomllib.load(handle)
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            sys.stderr.write("${id}: a line that is not JSON was ignored\\n")
            continue
        if not isinstance(request, dict) or "id" not in request or request.get("id") is None:
            continue  # a notification (or garbage): never answered
        if request.get("method") == "shutdown":
            send({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}})
            return
        try:
            send({"jsonrpc": "2.0", "id": request["id"], "result": answer(request, manifest)})
        except RpcError as error:
            send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": error.code, "message": error.message}})


if __name__ == "__main__":
    main()
`,
    "test_plugin.py": `"""Starts plugin.py as nexo does and speaks the contract to it: python3 -m unittest"""

import json
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


class PluginTest(unittest.TestCase):
    def setUp(self):
        self.plugin = subprocess.Popen(
            [sys.executable, "plugin.py"], cwd=HERE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.next_id = 0

    def tearDown(self):
        if self.plugin.poll() is None:
            self.plugin.kill()
        self.plugin.stdin.close()
        self.plugin.stdout.close()
        self.plugin.wait()

    def request(self, method, params=None):
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.plugin.stdin.write(json.dumps(frame) + "\\n")
        self.plugin.stdin.flush()
        return json.loads(self.plugin.stdout.readline())

    def test_greets_and_shuts_down(self):
        init = self.request("initialize", {"nexo_version": "0.1.0"})
        self.assertEqual([t["name"] for t in init["result"]["tools"]], ["${id}_greet"])
        reply = self.request("tool.invoke", {"plugin_id": "${id}", "tool_name": "${id}_greet", "args": {"name": "Ada"}})
        self.assertEqual(reply["result"]["content"][0]["text"], "Hello, Ada!")
        bad = self.request("tool.invoke", {"plugin_id": "${id}", "tool_name": "${id}_greet", "args": {}})
        self.assertEqual(bad["error"]["code"], -33402)
        self.assertEqual(self.request("shutdown")["result"], {"ok": True})
        self.assertEqual(self.plugin.wait(timeout=5), 0)


if __name__ == "__main__":
    unittest.main()
`,
    "README.md": readme(id, [
      "python3 -m unittest          # the plugin's own test",
      "nexo plugin check .          # nexo's conformance check",
      "nexo plugin call . " + id + '_greet \'{"name":"Ada"}\'',
    ]),
  };
}

function typescriptPlugin(id: string, sdkSpec: string): Record<string, string> {
  return {
    "nexo-plugin.toml": manifest(id, "node", ["dist/plugin.js"], "plugin.ts compiled by `npm run build`."),
    "package.json": `${JSON.stringify(
      {
        name: `nexo-plugin-${id.replace(/_/g, "-")}`,
        version: "0.1.0",
        private: true,
        type: "module",
        scripts: { build: "tsc", test: "npm run build && node --test dist/" },
        dependencies: { [SDK_PACKAGE]: sdkSpec },
        devDependencies: { typescript: "~5.9.3", "@types/node": "^20.19.0" },
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
        include: ["plugin.ts", "plugin.test.ts"],
      },
      null,
      2,
    )}\n`,
    "plugin.ts": `/**
 * The ${id} plugin: one tool, ${id}_greet, served with nexo-plugin-sdk. nexo runs it as
 * \`node dist/plugin.js\` (see nexo-plugin.toml); the SDK speaks the contract (initialize,
 * tool.invoke, shutdown, one JSON object per line on stdio) and checks arguments against the schema.
 */
import { readFileSync } from "node:fs";
import { PluginAdapter, textResult, ToolNotFoundError } from "${SDK_PACKAGE}";

const adapter = new PluginAdapter({
  manifestToml: readFileSync(new URL("../nexo-plugin.toml", import.meta.url), "utf8"),
  tools: [
    {
      name: "${id}_greet",
      description: "Greets a person by name.",
      inputSchema: {
        type: "object",
        properties: { name: { type: "string", minLength: 1 } },
        required: ["name"],
        additionalProperties: false,
      },
    },
  ],
  onTool: (call) => {
    if (call.toolName !== "${id}_greet") throw new ToolNotFoundError(call.toolName);
    const { name } = call.args as { name: string };
    return textResult(\`Hello, \${name}!\`);
  },
});

await adapter.run();
`,
    "plugin.test.ts": `/** Starts the compiled plugin as nexo does and speaks the contract to it: npm test */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

test("greets and shuts down", async () => {
  const dir = fileURLToPath(new URL("..", import.meta.url));
  const plugin = spawn(process.execPath, ["dist/plugin.js"], { cwd: dir, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: plugin.stdout })[Symbol.asyncIterator]();
  let id = 0;
  const request = async (method: string, params: object) => {
    plugin.stdin.write(\`\${JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })}\\n\`);
    return JSON.parse((await lines.next()).value as string);
  };
  const init = await request("initialize", { nexo_version: "0.1.0" });
  assert.deepEqual(init.result.tools.map((t: { name: string }) => t.name), ["${id}_greet"]);
  const reply = await request("tool.invoke", { plugin_id: "${id}", tool_name: "${id}_greet", args: { name: "Ada" } });
  assert.equal(reply.result.content[0].text, "Hello, Ada!");
  assert.deepEqual((await request("shutdown", {})).result, { ok: true });
  plugin.stdin.end();
});
`,
    ".gitignore": "node_modules/\ndist/\n",
    "README.md": readme(id, [
      "npm install && npm test      # build, then the plugin's own test",
      "nexo plugin check .          # nexo's conformance check",
      "nexo plugin call . " + id + '_greet \'{"name":"Ada"}\'',
    ]),
  };
}

function readme(id: string, commands: string[]): string {
  return `# ${id}

A nexo tool plugin made by \`nexo plugin new\`. It offers one tool, \`${id}_greet\`.

\`\`\`sh
${commands.join("\n")}
\`\`\`

To give it to your agents, add its directory to the config directory's plugins.yaml and list the
tool in the agent's \`allowed_tools\` (if the agent has that list):

\`\`\`yaml
plugins:
  - dir: /path/to/this/directory
\`\`\`
`;
}
