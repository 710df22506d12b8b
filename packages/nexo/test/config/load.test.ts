import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { z } from "zod";
import {
  ConfigError,
  configFormatOf,
  formatIssue,
  formatKeyPath,
  listConfigFiles,
  loadConfigFile,
  parseConfigText,
} from "../../src/config/index.js";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "nexo-config-load-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const Agents = z.object({
  agents: z.array(
    z.strictObject({
      id: z.string(),
      model: z.object({ provider: z.enum(["anthropic", "openai"]), model: z.string() }),
    }),
  ),
});

async function loadError(path: string, schema: z.ZodType = Agents): Promise<ConfigError> {
  try {
    await loadConfigFile(path, schema, { env: {} });
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected loadConfigFile to fail");
}

function parseError(text: string, format: "yaml" | "toml", schema: z.ZodType = Agents, file = `f.${format}`) {
  try {
    parseConfigText(text, format, schema, { file, env: {} });
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected parseConfigText to fail");
}

const brokenAgentsYaml = `# Agents served by this daemon.
agents:
  - id: ana
    model:
      provider: anthropic
      model: claude-sonnet
  - id: bob
    model:
      provider: openai
      model: gpt
  - id: cy
    model:
      provider: antropic
      model: 42
`;

describe("YAML", () => {
  it("loads a valid file into the schema's type", async () => {
    const path = join(dir, "ok.yaml");
    writeFileSync(path, "agents:\n  - id: ana\n    model: {provider: anthropic, model: m}\n");
    const value = await loadConfigFile(path, Agents, { env: {} });
    assert.deepEqual(value, { agents: [{ id: "ana", model: { provider: "anthropic", model: "m" } }] });
  });

  it("points a wrong-typed nested value at its key's exact line and column", async () => {
    const path = join(dir, "agents.yaml");
    writeFileSync(path, brokenAgentsYaml);
    const error = await loadError(path);
    assert.equal(error.code, "schema");
    assert.equal(error.file, path);
    assert.deepEqual(
      error.issues.map((issue) => [issue.line, issue.column, issue.keyPath, issue.message]),
      [
        [13, 7, "agents[2].model.provider", 'expected one of anthropic|openai, got "antropic"'],
        [14, 7, "agents[2].model.model", "expected string, got 42"],
      ],
    );
    assert.equal(
      String(error),
      `${path}:13:7: agents[2].model.provider: expected one of anthropic|openai, got "antropic"\n` +
        `${path}:14:7: agents[2].model.model: expected string, got 42`,
    );
  });

  it("reports a syntax error with its line and column", () => {
    const error = parseError("broker:\n  type: local\n\turl: x\n", "yaml", z.any(), "broker.yaml");
    assert.equal(error.code, "parse");
    assert.equal(error.message, "broker.yaml:3:1: Tabs are not allowed as indentation");
    assert.deepEqual([error.line, error.column], [3, 1]);
  });

  it("rejects duplicate keys, naming the key", () => {
    const error = parseError("broker:\n  type: local\n  url: a\n  url: b\n", "yaml", z.any(), "broker.yaml");
    assert.equal(error.message, 'broker.yaml:4:3: duplicate key "url"');
  });

  it("reports every problem of a file, top to bottom", () => {
    const text = `agents:
  - id: 7
    modle: x
    model:
      provider: openai
  - model:
      provider: gemini
      model: m
`;
    const error = parseError(text, "yaml", Agents, "agents.yaml");
    assert.deepEqual(error.issues.map(formatIssue), [
      "agents.yaml:2:5: agents[0].id: expected string, got 7",
      'agents.yaml:3:5: agents[0].modle: unknown key "modle" (did you mean "model"?)',
      "agents.yaml:4:5: agents[0].model.model: missing (expected string)",
      "agents.yaml:6:5: agents[1].id: missing (expected string)",
      'agents.yaml:7:7: agents[1].model.provider: expected one of anthropic|openai, got "gemini"',
    ]);
  });

  it("follows aliases to report positions", () => {
    const text = "defaults: &m\n  provider: nope\n  model: m\nagents:\n  - id: a\n    model: *m\n";
    const error = parseError(text, "yaml", z.looseObject({ agents: Agents.shape.agents }));
    assert.deepEqual([error.line, error.column, error.keyPath], [2, 3, "agents[0].model.provider"]);
  });

  it("words union failures as one expectation", () => {
    const schema = z.object({
      servers: z.record(
        z.string(),
        z.discriminatedUnion("transport", [
          z.object({ transport: z.literal("stdio"), command: z.string() }),
          z.object({ transport: z.literal("sse"), url: z.string() }),
        ]),
      ),
      timeout: z.union([z.string(), z.number()]),
    });
    const error = parseError(
      "servers:\n  a:\n    transport: stdo\n  b: {}\ntimeout: true\n",
      "yaml",
      schema,
      "mcp.yaml",
    );
    assert.deepEqual(error.issues.map(formatIssue), [
      'mcp.yaml:3:5: servers.a.transport: expected one of stdio|sse, got "stdo"',
      "mcp.yaml:4:3: servers.b.transport: missing (expected one of stdio|sse)",
      "mcp.yaml:5:1: timeout: expected string or number, got true",
    ]);
  });

  it("keeps messages the schema author wrote", () => {
    const schema = z.object({ port: z.number().refine((n) => n > 1024, "port must be above 1024") });
    assert.equal(
      parseError("port: 80\n", "yaml", schema, "x.yaml").message,
      "x.yaml:1:1: port: port must be above 1024",
    );
  });

  it("reads an empty or comments-only file as an empty mapping and keeps 1.2 scalars as strings", () => {
    const schema = z.object({ flag: z.string().optional() });
    assert.deepEqual(parseConfigText("# nothing yet\n", "yaml", schema, { env: {} }), {});
    assert.deepEqual(parseConfigText("", "yaml", schema, { env: {} }), {});
    assert.deepEqual(parseConfigText("flag: yes\n", "yaml", schema, { env: {} }), { flag: "yes" });
  });

  it("ignores a byte order mark", () => {
    const value = parseConfigText("\ufeffagents: []\n", "yaml", Agents, { env: {} });
    assert.deepEqual(value, { agents: [] });
  });
});

describe("TOML", () => {
  const toml = `# Agents
[[agents]]
id = "ana"
model = { provider = "anthropic", model = 7 }

[[agents]]
id = "cy"

[agents.model]
provider = "antropic"
model = """
not = "a key"
"""
`;

  it("points wrong values at their keys, in tables, arrays of tables and inline tables", async () => {
    const path = join(dir, "agents.toml");
    writeFileSync(path, toml);
    const error = await loadError(path);
    assert.deepEqual(
      error.issues.map((issue) => [issue.line, issue.column, issue.keyPath, issue.message]),
      [
        [4, 35, "agents[0].model.model", "expected string, got 7"],
        [10, 1, "agents[1].model.provider", 'expected one of anthropic|openai, got "antropic"'],
      ],
    );
  });

  it("reports a syntax error with smol-toml's line and column", () => {
    const error = parseError('[broker]\ntype = "local"\nurl = nats://x\n', "toml", z.any(), "broker.toml");
    assert.equal(error.code, "parse");
    assert.equal(error.message, "broker.toml:3:7: invalid value");
  });

  it("finds dotted, quoted and nested keys, and array elements", () => {
    const text = `[servers."my.server"]
transport = "stdio"
args = [
  "--a",
  2,
]
env.DEBUG = 1
`;
    const schema = z.object({
      servers: z.record(
        z.string(),
        z.object({ transport: z.string(), args: z.array(z.string()), env: z.record(z.string(), z.string()) }),
      ),
    });
    const error = parseError(text, "toml", schema);
    assert.deepEqual(
      error.issues.map((issue) => [issue.line, issue.column, issue.keyPath]),
      [
        [5, 3, 'servers["my.server"].args[1]'],
        [7, 5, 'servers["my.server"].env.DEBUG'],
      ],
    );
  });

  it("points a missing key at the table that should hold it", () => {
    const error = parseError('[[agents]]\nid = "a"\n\n[[agents]]\nid = "b"\n', "toml");
    assert.deepEqual(
      error.issues.map((issue) => [issue.line, issue.column, issue.keyPath]),
      [
        [1, 1, "agents[0].model"],
        [4, 1, "agents[1].model"],
      ],
    );
  });

  it("turns TOML dates into ISO strings, like YAML 1.2 leaves them", () => {
    const value = parseConfigText("day = 2024-05-01\nat = 2024-05-01T10:00:00Z\n", "toml", z.any(), {
      env: {},
    });
    assert.deepEqual(value, { day: "2024-05-01", at: "2024-05-01T10:00:00.000Z" });
  });
});

describe("files and names", () => {
  it("refuses unknown extensions and reports unreadable files as io errors", async () => {
    assert.equal(configFormatOf("a/b.YML"), "yaml");
    assert.equal(configFormatOf("trusted_keys.toml"), "toml");
    assert.equal(configFormatOf("notes.json"), undefined);
    const wrong = await loadError(join(dir, "config.json"));
    assert.equal(wrong.code, "io");
    const missing = await loadError(join(dir, "absent.yaml"));
    assert.equal(missing.code, "io");
    assert.equal((missing.cause as NodeJS.ErrnoException).code, "ENOENT");
    assert.match(missing.message, /absent\.yaml: cannot read: ENOENT/);
  });

  it("listConfigFiles skips hidden files and the writer's temp files", async () => {
    const sub = mkdtempSync(join(dir, "list-"));
    for (const name of [
      "b.yaml",
      "a.toml",
      "c.yml",
      "README.md",
      ".hidden.yaml",
      ".b.yaml.tmp-123-abcdef01",
    ]) {
      writeFileSync(join(sub, name), "x: 1\n");
    }
    symlinkSync(join(sub, "b.yaml"), join(sub, "linked.yaml"));
    symlinkSync(join(sub, "nowhere.yaml"), join(sub, "broken.yaml"));
    mkdirSync(join(sub, "agents.d.yaml"));
    assert.deepEqual(
      await listConfigFiles(sub),
      ["a.toml", "b.yaml", "c.yml", "linked.yaml"].map((n) => join(sub, n)),
    );
  });

  it("formats key paths the way a reader would write them", () => {
    assert.equal(formatKeyPath(["agents", 2, "model", "provider"]), "agents[2].model.provider");
    assert.equal(formatKeyPath(["mcp", "servers", "my-server"]), "mcp.servers.my-server");
    assert.equal(formatKeyPath(["servers", "a.b", "x y"]), 'servers["a.b"]["x y"]');
    assert.equal(formatKeyPath([]), "");
  });

  it("formats issues without a file or position sensibly", () => {
    assert.equal(formatIssue({ code: "schema", message: "m", keyPath: "a.b" }), "a.b: m");
    assert.equal(formatIssue({ code: "parse", message: "m", line: 3, column: 2 }), "line 3:2: m");
    assert.equal(formatIssue({ code: "io", message: "m", file: "x.yaml" }), "x.yaml: m");
  });
});
