import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError } from "../../../src/config/errors.js";
import { parseConfigText } from "../../../src/config/load.js";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  McpConfigSchema,
  McpServerConfigSchema,
  serverConfigFromFields,
  serverNameProblem,
} from "../../../src/extensions/mcp/config.js";
import { toolOutputFromResult } from "../../../src/extensions/mcp/content.js";
import {
  cleanToolName,
  MAX_TOOL_NAME_LENGTH,
  namespaceTools,
  serverOfToolName,
} from "../../../src/extensions/mcp/naming.js";
import { stdioServerEnv } from "../../../src/extensions/mcp/stdio-transport.js";

const parseYaml = (text: string, env: Record<string, string> = {}) =>
  parseConfigText(text, "yaml", McpConfigSchema, { file: "mcp.yaml", env });

const configError = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the config to be rejected");
};

describe("mcp.yaml schema", () => {
  test("a full file parses, with defaults filled in and both HTTP spellings normalised", () => {
    const config = parseYaml(
      [
        "servers:",
        "  files:",
        "    transport: stdio",
        "    command: npx",
        "    args: [-y, '@modelcontextprotocol/server-filesystem', /srv, 8080]",
        "    env: { GITHUB_TOKEN: '${TOKEN}', PORT: 8080, DEBUG: true }",
        "    cwd: ./servers",
        "  search:",
        "    transport: streamable-http",
        "    url: https://mcp.example.com/mcp",
        "    headers: { Authorization: 'Bearer ${TOKEN}' }",
        "    startup_timeout_ms: 5000",
        "    call_timeout_ms: 1000",
        "  off:",
        "    transport: streamable_http",
        "    url: http://127.0.0.1:9/mcp",
        "    enabled: false",
      ].join("\n"),
      { TOKEN: "t0k" },
    );
    assert.equal(config.startup_timeout_ms, DEFAULT_STARTUP_TIMEOUT_MS);
    assert.equal(config.call_timeout_ms, DEFAULT_CALL_TIMEOUT_MS);
    assert.deepEqual(config.servers.files, {
      transport: "stdio",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv", "8080"],
      env: { GITHUB_TOKEN: "t0k", PORT: "8080", DEBUG: "true" },
      cwd: "./servers",
      enabled: true,
    });
    assert.deepEqual(config.servers.search, {
      transport: "streamable_http",
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer t0k" },
      startup_timeout_ms: 5000,
      call_timeout_ms: 1000,
      enabled: true,
    });
    assert.equal(config.servers.off?.enabled, false);
    assert.equal(config.servers.off?.transport, "streamable_http");
  });

  test("an empty file means no servers", () => {
    assert.deepEqual(parseYaml("").servers, {});
  });

  test("an unquoted id too long for YAML to keep exact is refused in env and args; quoted it passes", () => {
    const env = configError(() =>
      parseYaml(
        "servers:\n  bot:\n    transport: stdio\n    command: x\n    env: { OWNER_ID: 123456789012345678 }\n",
      ),
    );
    assert.match(
      env.message,
      /servers\.bot\.env\.OWNER_ID: 123456789012345680 is too long a number .*write it in quotes/,
    );
    const args = configError(() =>
      parseYaml(
        "servers:\n  bot:\n    transport: stdio\n    command: x\n    args: [--owner, 123456789012345678]\n",
      ),
    );
    assert.match(args.message, /servers\.bot\.args\[1\]: .*write it in quotes/);
    const quoted = parseYaml(
      "servers:\n  bot:\n    transport: stdio\n    command: x\n    env: { OWNER_ID: '123456789012345678' }\n",
    );
    assert.equal(
      quoted.servers.bot?.transport === "stdio" && quoted.servers.bot.env.OWNER_ID,
      "123456789012345678",
    );
  });

  test("unknown keys are errors, with a suggestion", () => {
    const error = configError(() =>
      parseYaml("servers:\n  fs:\n    transport: stdio\n    command: x\n    enabeld: false\n"),
    );
    assert.match(
      error.message,
      /mcp\.yaml:5:5: servers\.fs\.enabeld: unknown key "enabeld" \(did you mean "enabled"\?\)/,
    );
  });

  test("transport problems say what is accepted; sse gets its own explanation", () => {
    assert.match(
      configError(() => parseYaml("servers:\n  a:\n    transport: sse\n    url: http://x/\n")).message,
      /"sse".*not supported; use "streamable_http"/,
    );
    assert.match(
      configError(() => parseYaml("servers:\n  a:\n    transport: websocket\n")).message,
      /transport must be "stdio" or "streamable_http", got "websocket"/,
    );
    assert.match(
      configError(() => parseYaml("servers:\n  a:\n    command: x\n")).message,
      /transport is required/,
    );
  });

  test("fields are checked per transport", () => {
    assert.match(
      configError(() => parseYaml("servers:\n  a:\n    transport: stdio\n    command: ''\n")).message,
      /command must not be empty/,
    );
    assert.match(
      configError(() => parseYaml("servers:\n  a:\n    transport: streamable_http\n    url: ftp://x/\n"))
        .message,
      /url must be an http\(s\) URL/,
    );
    assert.match(
      configError(() =>
        parseYaml("servers:\n  a:\n    transport: stdio\n    command: x\n    url: http://x/\n"),
      ).message,
      /unknown key "url"/,
    );
    assert.match(
      configError(() =>
        parseYaml("servers:\n  a:\n    transport: stdio\n    command: x\n    env: { 1BAD: v }\n"),
      ).message,
      /"1BAD" is not a variable name/,
    );
    assert.match(
      configError(() =>
        parseYaml(
          'servers:\n  a:\n    transport: streamable_http\n    url: http://x/\n    headers: { "X-A": "a\\nb" }\n',
        ),
      ).message,
      /line breaks/,
    );
    assert.match(
      configError(() =>
        parseYaml("servers:\n  a:\n    transport: stdio\n    command: x\n    startup_timeout_ms: 0\n"),
      ).message,
      /startup_timeout_ms/,
    );
  });

  test("server names: the character set, the length, no '__', no trailing '_'", () => {
    assert.equal(serverNameProblem("github"), undefined);
    assert.equal(serverNameProblem("my-server_2"), undefined);
    assert.equal(serverNameProblem("_x"), undefined);
    assert.match(serverNameProblem("a.b") ?? "", /A-Z a-z 0-9/);
    assert.match(serverNameProblem("") ?? "", /1-32/);
    assert.match(serverNameProblem("x".repeat(33)) ?? "", /1-32/);
    assert.match(serverNameProblem("a__b") ?? "", /"__"/);
    assert.match(serverNameProblem("a_") ?? "", /end with "_"/);
    assert.match(
      configError(() => parseYaml("servers:\n  bad__name:\n    transport: stdio\n    command: x\n")).message,
      /server name "bad__name" must not contain "__"/,
    );
  });

  test("an add_mcp_server command becomes a server config with only its transport's keys", () => {
    const stdio = serverConfigFromFields({
      type: "add_mcp_server",
      name: "fs",
      transport: "stdio",
      command: "npx",
      args: ["-y", "server"],
      env: { A: "1" },
      url: "",
      headers: {},
    });
    assert.deepEqual(stdio, { transport: "stdio", command: "npx", args: ["-y", "server"], env: { A: "1" } });
    assert.equal(McpServerConfigSchema.safeParse(stdio).success, true);
    const http = serverConfigFromFields({
      type: "add_mcp_server",
      name: "web",
      transport: "streamable-http",
      url: "http://127.0.0.1:1/mcp",
      headers: { A: "b" },
      command: undefined,
    });
    assert.deepEqual(http, {
      transport: "streamable-http",
      url: "http://127.0.0.1:1/mcp",
      headers: { A: "b" },
    });
    // An unsupported transport keeps every field; the schema then explains the transport.
    const sse = serverConfigFromFields({ transport: "sse", url: "http://x/" });
    assert.match(
      McpServerConfigSchema.safeParse(sse).error?.issues[0]?.message ?? "",
      /"sse".*not supported/,
    );
  });

  test("a single server config (the add_mcp_server path) parses on its own", () => {
    const parsed = McpServerConfigSchema.parse({
      transport: "streamable-http",
      url: "http://127.0.0.1:1/mcp",
    });
    assert.equal(parsed.transport, "streamable_http");
  });
});

describe("tool naming", () => {
  test("tools are namespaced as mcp__<server>__<tool>", () => {
    const { names, skipped } = namespaceTools("github", ["create_issue", "search-code"]);
    assert.deepEqual(
      [...names],
      [
        ["mcp__github__create_issue", "create_issue"],
        ["mcp__github__search-code", "search-code"],
      ],
    );
    assert.deepEqual(skipped, []);
  });

  test("characters providers refuse are replaced; a clash is settled by a hash, independent of order", () => {
    assert.equal(cleanToolName("files.read/ü"), "files_read__");
    const forward = namespaceTools("fs", ["files.read", "files_read", "files:read"]).names;
    const backward = namespaceTools("fs", ["files:read", "files_read", "files.read"]).names;
    assert.deepEqual(new Map([...forward].sort()), new Map([...backward].sort()));
    // The name that needed no change keeps its plain form.
    assert.equal(forward.get("mcp__fs__files_read"), "files_read");
    const hashed = [...forward].filter(([, original]) => original !== "files_read");
    assert.equal(hashed.length, 2);
    for (const [name] of hashed) assert.match(name, /^mcp__fs__files_read_[0-9a-f]{8}$/);
    // A lone cleaned name keeps the plain cleaned form.
    assert.deepEqual([...namespaceTools("fs", ["files.read"]).names.keys()], ["mcp__fs__files_read"]);
  });

  test("every name fits 64 characters and the provider pattern, even for long and empty tool names", () => {
    const server = "s".repeat(32);
    const tools = ["t".repeat(200), `${"t".repeat(199)}x`, "", "ok", "日本語"];
    const { names, skipped } = namespaceTools(server, tools);
    assert.deepEqual(skipped, []);
    assert.equal(names.size, tools.length);
    for (const name of names.keys()) {
      assert.ok(name.length <= MAX_TOOL_NAME_LENGTH, name);
      assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/);
    }
  });

  test("no two (server, tool) pairs share a name, and the server is read back from the name", () => {
    const servers = ["a", "a_b", "a-b", "b", "_a", "x1"];
    const tools = ["b", "_b", "b__c", "__", "c_", "a", "_", "b_c"];
    const seen = new Map<string, string>();
    for (const server of servers) {
      for (const [name, tool] of namespaceTools(server, tools).names) {
        const pair = `${server}/${tool}`;
        assert.equal(seen.get(name), undefined, `${name} is given to both ${seen.get(name)} and ${pair}`);
        seen.set(name, pair);
        assert.equal(serverOfToolName(name), server);
      }
    }
    assert.equal(serverOfToolName("Read"), undefined);
    assert.equal(serverOfToolName("mcp____x"), undefined);
  });
});

describe("tool results", () => {
  const origin = { server: "s", tool: "t" };

  test("text items are joined; isError carries over", () => {
    assert.deepEqual(
      toolOutputFromResult(
        {
          content: [
            { type: "text", text: "one" },
            { type: "text", text: "two" },
          ],
        },
        origin,
      ),
      { output: "one\ntwo", metadata: { mcp_server: "s", mcp_tool: "t" } },
    );
    const failed = toolOutputFromResult({ content: [{ type: "text", text: "nope" }], isError: true }, origin);
    assert.equal(failed.isError, true);
    assert.equal(failed.output, "nope");
    assert.equal(
      toolOutputFromResult({ content: [], isError: true }, origin).output,
      "the tool failed without saying why",
    );
    assert.equal(toolOutputFromResult({ content: [] }, origin).output, "(no output)");
  });

  test("a lone image stays an image; next to other content it is described", () => {
    const data = Buffer.from("12345678").toString("base64");
    const image = toolOutputFromResult({ content: [{ type: "image", data, mimeType: "image/png" }] }, origin);
    assert.equal(image.outputType, "image");
    assert.equal(image.output, data);
    assert.deepEqual(image.metadata, { mcp_server: "s", mcp_tool: "t", media_type: "image/png", bytes: 8 });
    const mixed = toolOutputFromResult(
      {
        content: [
          { type: "text", text: "caption" },
          { type: "image", data, mimeType: "image/png" },
          { type: "audio", data, mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "file:///a.txt", text: "inside" } },
          { type: "resource", resource: { uri: "file:///b.bin", blob: data, mimeType: "application/x" } },
          { type: "resource_link", uri: "file:///c", name: "c" },
        ],
      },
      origin,
    );
    assert.equal(mixed.outputType, undefined);
    assert.equal(
      mixed.output,
      [
        "caption",
        "[image image/png, 8 bytes, not shown]",
        "[audio audio/wav, 8 bytes, not shown]",
        "[resource file:///a.txt]\ninside",
        "[resource file:///b.bin application/x, 8 bytes of binary data, not shown]",
        "[resource link c: file:///c]",
      ].join("\n"),
    );
  });

  test("structured content is the output when the server sent no text", () => {
    assert.equal(
      toolOutputFromResult({ content: [], structuredContent: { sum: 3 } }, origin).output,
      '{"sum":3}',
    );
  });
});

describe("stdio server environment", () => {
  test("the base every child gets (no secrets); the server's env is added and wins", () => {
    const host = {
      PATH: "/bin",
      HOME: "/home/n",
      LANG: "C.UTF-8",
      TZ: "UTC",
      TMPDIR: "/var/tmp",
      ANTHROPIC_API_KEY: "sk-secret",
      USER: "n",
    };
    assert.deepEqual(stdioServerEnv({ TOKEN: "t", LANG: "de_DE.UTF-8" }, host), {
      PATH: "/bin",
      HOME: "/home/n",
      TMPDIR: "/var/tmp",
      LANG: "de_DE.UTF-8",
      TZ: "UTC",
      TOKEN: "t",
    });
  });

  test("without a PATH in the daemon a usable default is set", () => {
    assert.equal(stdioServerEnv({}, {}).PATH, "/usr/local/bin:/usr/bin:/bin");
  });

  test("NEXO_* variables belong to the daemon: mcp.yaml cannot set them", () => {
    const parsed = McpConfigSchema.safeParse({
      servers: { x: { transport: "stdio", command: "x", env: { NEXO_PROCESS_TAG: "forged" } } },
    });
    assert.equal(parsed.success, false);
    assert.match(JSON.stringify(parsed.error?.issues), /is reserved: variables beginning with NEXO_/);
  });
});

describe("restart policy in mcp.yaml", () => {
  test("file-wide and per-server restart: take plugins.yaml's keys; a bad one is refused", () => {
    const parsed = McpConfigSchema.parse({
      restart: { max_restarts: 2, initial_delay_ms: 100 },
      servers: { x: { transport: "stdio", command: "x", restart: { respawn: false } } },
    });
    assert.deepEqual(parsed.restart, { max_restarts: 2, initial_delay_ms: 100 });
    const server = parsed.servers.x;
    assert.equal(server?.transport, "stdio");
    assert.deepEqual(server?.transport === "stdio" ? server.restart : undefined, { respawn: false });
    const bad = McpConfigSchema.safeParse({ restart: { initial_delay_ms: 500, max_delay_ms: 100 } });
    assert.equal(bad.success, false);
    const typo = McpConfigSchema.safeParse({ restart: { max_restart: 2 } });
    assert.equal(typo.success, false);
    const http = McpConfigSchema.safeParse({
      servers: { y: { transport: "streamable_http", url: "http://127.0.0.1/mcp", restart: {} } },
    });
    assert.equal(http.success, false, "restart: is for the servers nexo starts");
  });
});
