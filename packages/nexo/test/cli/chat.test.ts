/**
 * `nexo chat` (issue 14.13), run as a person would: the real CLI, a real `nexo app-server` or daemon
 * behind it, the offline scripted model. Piped input drives most cases (lines are consumed in
 * order, an approval question takes the next line); one case runs the chat on a real pseudo
 * terminal (util-linux `script`) for the arrow-key history and Ctrl-D.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_PATH, runCli } from "../helpers/cli.js";
import { killProcessesOfStateDir } from "../helpers/state-dir-processes.js";
import { waitFor } from "../helpers/wait.js";

const QUICKSTART = fileURLToPath(new URL("../../../../examples/quickstart", import.meta.url));
/** The CLI's entry as tsc writes it: no launcher beside it, as on an install without bin/nexo. */
const DIST_ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A chat's or daemon's environment on `stateDir`. Whatever runs with it is killed after the test,
 * passed or failed: the daemon a chat starts outlives the chat's SIGKILL.
 */
function env(stateDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  after(() => killProcessesOfStateDir(stateDir));
  return { PATH: process.env.PATH, HOME: process.env.HOME, NEXO_STATE_DIR: stateDir, ...extra };
}

/** The pid the chat's banner names for what it started or joined. */
function bannerPid(stderr: string): number {
  const match = /\(pid (\d+)/.exec(stderr);
  assert.ok(match, `no pid in the banner: ${stderr}`);
  return Number(match[1]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A chat kept running (stdin open) so what it started can be looked at in /proc. */
function runningChat(entry: string, args: string[], chatEnv: NodeJS.ProcessEnv) {
  const chat = spawn(process.execPath, [entry, "chat", ...args], {
    env: chatEnv,
    stdio: ["pipe", "pipe", "pipe"],
  });
  after(() => chat.kill("SIGKILL"));
  let out = "";
  let err = "";
  chat.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  chat.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  return {
    chat,
    out: () => out,
    err: () => err,
    /** The pid the banner names, once it is printed. */
    startedPid: (what: RegExp) =>
      waitFor(
        "the banner",
        () => {
          const match = new RegExp(`${what.source} \\(pid (\\d+)`).exec(err);
          return match ? Number(match[1]) : undefined;
        },
        90_000,
      ),
    /** Ends the chat (Ctrl-D) and resolves with its exit status. */
    leave: async (input = "") => {
      chat.stdin.end(input);
      const [code] = (await once(chat, "exit")) as [number | null];
      return code;
    },
  };
}

/** A process's argv and environment, from /proc. */
function processOf(pid: number): { argv: string[]; environ: string[] } {
  const list = (file: string) => readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0").slice(0, -1);
  return { argv: list("cmdline"), environ: list("environ") };
}

/** A copy of the quickstart config whose workspace is a temp dir (tests write files there). */
function quickstartCopy(): string {
  const dir = tempDir("nexo-chat-config-");
  cpSync(QUICKSTART, dir, { recursive: true });
  const plugins = fileURLToPath(new URL("../../../../examples/plugins/", import.meta.url));
  const file = join(dir, "plugins.yaml");
  writeFileSync(file, readFileSync(file, "utf8").replaceAll("../plugins/", plugins));
  // The operator console microapp, by its path in the repository.
  const packages = fileURLToPath(new URL("../../../../packages/", import.meta.url));
  const extensions = join(dir, "extensions.yaml");
  writeFileSync(extensions, readFileSync(extensions, "utf8").replaceAll("../../packages/", packages));
  return dir;
}

describe("nexo chat with a private app-server", () => {
  it("streams replies, thinking and tool calls, and asks before writing", { timeout: 60_000 }, async () => {
    const workspace = tempDir("nexo-chat-ws-");
    writeFileSync(join(workspace, "notes.md"), "first line of the notes\n");
    const state = tempDir("nexo-chat-state-");
    const input = [
      "read notes.md",
      "think about rivers",
      "write kept.txt: approved text",
      "once",
      "write refused.txt: never",
      "deny",
      "/model",
      "/nonsense",
      "",
    ].join("\n");
    const result = await runCli(["chat", "--workspace", workspace], {
      env: env(state),
      input,
      timeoutMs: 50_000,
    });
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    assert.match(out, /⏺ Read\(file_path: notes\.md\)/);
    assert.match(out, /first line of the notes/);
    assert.match(out, /thinking: The user wants me to think about rivers/);
    assert.match(out, /approve file: write kept\.txt/);
    assert.match(out, /add kept\.txt \(\+1 -0\)/);
    assert.equal(readFileSync(join(workspace, "kept.txt"), "utf8"), "approved text");
    assert.match(out, /approve file: write refused\.txt/);
    assert.equal(existsSync(join(workspace, "refused.txt")), false, "a denied write must not happen");
    assert.match(out, /model: /);
    assert.match(out, /unknown command \/nonsense — \/help lists them/);
    // Piped: the banner is on stderr, and no colour codes reach a pipe.
    assert.match(result.stderr, /nexo chat — a private nexo app-server/);
    assert.ok(!out.includes("\u001b["), "no colour codes in a pipe");
    assert.equal(alive(bannerPid(result.stderr)), false, "the private app-server outlived the chat");
  });

  it("/new starts a new thread and --resume continues one", { timeout: 200_000 }, async () => {
    const workspace = tempDir("nexo-chat-ws-");
    const state = tempDir("nexo-chat-state-");
    // Generous: two chats, each with its own app-server, on a machine that may be loaded.
    const first = await runCli(["chat", "--workspace", workspace], {
      env: env(state),
      input: "list files\n/thread\n/new\n/thread\n",
      timeoutMs: 90_000,
    });
    assert.equal(first.code, 0, first.stderr);
    const ids = [...first.stdout.matchAll(/^thread (\S+)$/gm)].map((m) => m[1]!);
    assert.equal(ids.length, 2, first.stdout);
    assert.notEqual(ids[0], ids[1]);
    const initial = /thread (\S+?)[.,]/.exec(first.stderr)?.[1];
    assert.equal(initial, ids[0]);

    const resumed = await runCli(["chat", "--workspace", workspace, "--resume", ids[0]!], {
      env: env(state),
      input: "/thread\n",
      timeoutMs: 90_000,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`^thread ${ids[0]}$`, "m"));
  });

  it("starts its app-server through the launcher beside the entry, or with the entry itself where there is none", {
    timeout: 120_000,
  }, async () => {
    const workspace = tempDir("nexo-chat-ws-");
    for (const [entry, expected] of [
      // The `nexo` command's way: bin/nexo beside bin/nexo.js, which execs node with bin/nexo.js.
      [CLI_PATH, realpathSync(CLI_PATH)],
      [DIST_ENTRY, DIST_ENTRY],
    ] as const) {
      const run = runningChat(entry, ["--workspace", workspace], env(tempDir("nexo-chat-state-")));
      const pid = await run.startedPid(/a private nexo app-server/);
      assert.deepEqual(processOf(pid).argv, [
        process.execPath,
        expected,
        "app-server",
        "--workspace",
        workspace,
      ]);
      assert.equal(await run.leave(), 0, run.err());
      assert.equal(alive(pid), false, "the private app-server outlived the chat");
    }
  });

  it("refuses contradictory flags and an unknown thread with a clear message", {
    timeout: 60_000,
  }, async () => {
    const state = tempDir("nexo-chat-state-");
    const both = await runCli(["chat", "--config", QUICKSTART, "--connect", "ws://127.0.0.1:1/ws"], {
      env: env(state),
    });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--connect and --config exclude each other/);

    const unknown = await runCli(["chat", "--resume", "no-such-thread"], { env: env(state) });
    assert.equal(unknown.code, 0, "the chat reports the problem and ends cleanly");
    assert.match(unknown.stderr, /nexo chat: .*no-such-thread/i);
  });
});

describe("nexo chat with a config directory", () => {
  it("starts the daemon, uses its plugin tools, and stops it on leaving", { timeout: 120_000 }, async () => {
    const config = quickstartCopy();
    const state = tempDir("nexo-chat-state-");
    const result = await runCli(["chat", "--config", config], {
      env: env(state),
      input: "weather in Oslo\n",
      timeoutMs: 100_000,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /⏺ demo_weather\(city: Oslo\)/);
    assert.match(result.stdout, /Forecast for Oslo/);
    assert.match(result.stderr, /a daemon started for this chat/);
    // The start is long work: piped, it is announced and then timed (issue 14.14).
    assert.match(
      result.stderr,
      /nexo chat: starting the daemon for .*…\nnexo chat: daemon ready in \d+\.\d s/,
    );
    const pid = bannerPid(result.stderr);
    await waitFor("the daemon to stop", () => !alive(pid) || undefined, 20_000);
    assert.equal(existsSync(join(state, "appserver.json")), false, "the endpoint file is removed");
  });

  it("starts the daemon as the nexo command starts it: the launcher's flags, on the chat's own node", {
    timeout: 120_000,
  }, async () => {
    const config = quickstartCopy();
    const state = tempDir("nexo-chat-state-");
    // Another `node` first on PATH: it runs the real one with a mark in its environment (the
    // plugins, which the daemon starts with `node`, still run). The daemon must not be started by it.
    const pathDir = tempDir("nexo-chat-path-");
    writeFileSync(
      join(pathDir, "node"),
      `#!/bin/sh\nNEXO_TEST_PATH_NODE=1 exec '${process.execPath}' "$@"\n`,
    );
    chmodSync(join(pathDir, "node"), 0o755);
    const run = runningChat(
      CLI_PATH,
      ["--config", config],
      env(state, { PATH: `${pathDir}:${process.env.PATH}` }),
    );
    const pid = await run.startedPid(/a daemon started for this chat/);
    const daemon = processOf(pid);
    // What bin/nexo gives `nexo start` (test/cli/launcher.test.ts pins the launcher itself): the
    // daemon build's own entry beside bin/.
    assert.deepEqual(daemon.argv, [
      process.execPath,
      "--v8-pool-size=1",
      `${join(realpathSync(CLI_PATH), "..")}/../bundle/daemon-main.js`,
      "start",
      "--config",
      config,
      "--appserver",
      "ws://127.0.0.1:0",
    ]);
    assert.ok(daemon.environ.includes("MALLOC_ARENA_MAX=2"), "two malloc arenas");
    assert.ok(!daemon.environ.some((v) => v.startsWith("NEXO_TEST_PATH_NODE=")), "the chat's own node");
    assert.ok(!daemon.environ.some((v) => v.startsWith("NEXO_NODE=")), "the launcher keeps NEXO_NODE");
    assert.equal(await run.leave("weather in Oslo\n"), 0, run.err());
    assert.match(run.out(), /Forecast for Oslo/);
    await waitFor("the daemon to stop", () => !alive(pid) || undefined, 20_000);
  });

  it("reports an invalid config with its problems and exit status 2", { timeout: 60_000 }, async () => {
    const config = quickstartCopy();
    writeFileSync(join(config, "agents.yaml"), "agents:\n  - id: a\n    modle: x\n");
    const result = await runCli(["chat", "--config", config], { env: env(tempDir("nexo-chat-state-")) });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /nexo chat: the config in .* is not valid/);
    assert.match(result.stderr, /agents\.yaml/);
  });

  it("joins a running daemon through --connect, and a wrong token is refused", {
    timeout: 120_000,
  }, async () => {
    const config = quickstartCopy();
    const state = tempDir("nexo-chat-state-");
    const token = "chat-test-token-0123456789";
    const daemon = spawn(
      process.execPath,
      [CLI_PATH, "start", "--config", config, "--appserver", "ws://127.0.0.1:0"],
      { env: env(state, { NEXO_APPSERVER_TOKEN: token }), stdio: "ignore" },
    );
    after(() => daemon.kill("SIGKILL"));
    const endpoint = await waitFor(
      "the daemon's AppServer endpoint",
      () => {
        try {
          return JSON.parse(readFileSync(join(state, "appserver.json"), "utf8")) as {
            url: string;
            pid: number;
          };
        } catch {
          return undefined;
        }
      },
      60_000,
    );
    assert.equal(endpoint.pid, daemon.pid);

    const joined = await runCli(["chat", "--connect", endpoint.url, "--token", token], {
      env: env(tempDir("nexo-chat-other-")),
      input: "weather in Lima\n",
    });
    assert.equal(joined.code, 0, joined.stderr);
    assert.match(joined.stdout, /Forecast for Lima/);
    assert.ok(alive(daemon.pid!), "a chat that only connected leaves the daemon running");

    const refused = await runCli(["chat", "--connect", endpoint.url, "--token", "wrong"], {
      env: env(tempDir("nexo-chat-other-")),
      input: "weather in Lima\n",
    });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /nexo chat: the server went away/);

    daemon.kill("SIGTERM");
    await once(daemon, "exit");
  });

  it("Ctrl-C stops a running turn and the chat goes on", { timeout: 120_000 }, async () => {
    const config = quickstartCopy();
    // A slow scripted model: each few words of thinking take a second.
    writeFileSync(
      join(config, "llm.yaml"),
      "providers:\n  slow:\n    type: scripted\n    chunk_delay_ms: 1000\n",
    );
    writeFileSync(
      join(config, "agents.yaml"),
      readFileSync(join(QUICKSTART, "agents.yaml"), "utf8").replace(/provider: .*/, "provider: slow"),
    );
    const state = tempDir("nexo-chat-state-");
    const chat: ChildProcess = spawn(process.execPath, [CLI_PATH, "chat", "--config", config], {
      env: env(state),
      stdio: ["pipe", "pipe", "pipe"],
    });
    after(() => chat.kill("SIGKILL"));
    let out = "";
    let err = "";
    chat.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    chat.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    chat.stdin!.write("think about a very long topic\n");
    await waitFor("the thinking stream", () => out.includes("thinking:") || undefined, 90_000);
    chat.kill("SIGINT");
    await waitFor("the turn to stop", () => /\(turn stopped: /.test(out) || undefined, 30_000);
    assert.ok(!out.includes("About a very long topic"), "the stopped turn must not finish its answer");
    chat.stdin!.end("/thread\n");
    const [code] = (await once(chat, "exit")) as [number | null];
    assert.equal(code, 0, `${out}\n${err}`);
    assert.match(out, /^thread \S+$/m);
  });
});

describe("nexo chat on a terminal", () => {
  it("keeps arrow-key history and leaves on Ctrl-D", { timeout: 90_000 }, async (t) => {
    const script = ["/usr/bin/script", "/bin/script"].find((path) => existsSync(path));
    if (script === undefined) {
      t.skip("util-linux script(1) is not installed");
      return;
    }
    const workspace = tempDir("nexo-chat-ws-");
    writeFileSync(join(workspace, "a.txt"), "alpha contents\n");
    const state = tempDir("nexo-chat-state-");
    const command = [process.execPath, CLI_PATH, "chat", "--workspace", workspace]
      .map((part) => `'${part.replace(/'/g, "'\\''")}'`)
      .join(" ");
    const tty = spawn(script, ["-qfec", command, "/dev/null"], {
      env: { ...env(state), TERM: "xterm", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    after(() => tty.kill("SIGKILL"));
    let screen = "";
    tty.stdout!.setEncoding("utf8").on("data", (d: string) => (screen += d));
    await waitFor("the prompt", () => screen.includes("you> ") || undefined, 60_000);
    tty.stdin!.write("read a.txt\r");
    await waitFor(
      "the first read",
      () => (screen.match(/alpha contents/g)?.length ?? 0) >= 1 || undefined,
      30_000,
    );
    await waitFor(
      "the prompt again",
      () => screen.lastIndexOf("you> ") > screen.lastIndexOf("alpha") || undefined,
    );
    // Up arrow brings back "read a.txt"; Enter runs it again.
    tty.stdin!.write("\u001b[A\r");
    await waitFor("the second read", () => (screen.match(/⏺ Read/g)?.length ?? 0) >= 2 || undefined, 30_000);
    await waitFor(
      "the prompt again",
      () => screen.lastIndexOf("you> ") > screen.lastIndexOf("⏺ Read") || undefined,
    );
    tty.stdin!.write("\u0004");
    const [code] = (await once(tty, "exit")) as [number | null];
    assert.equal(code, 0, screen);
    assert.match(screen, /nexo chat — a private nexo app-server/, "on a terminal the banner is in the chat");
    assert.match(readFileSync(join(state, "chat_history"), "utf8"), /read a\.txt/);
  });
});
