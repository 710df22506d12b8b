import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { exampleDir, PluginProcess } from "../../test-helpers/plugin-process.js";

/** chat.ts as the quickstart runs it (compiled: dist/chat.js), with its output collected. */
class ChatProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ["dist/chat.js", ...args], {
      cwd: exampleDir("loopback-channel"),
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.once("close", (code) => resolve(code)));
  }

  async waitFor(stream: "stdout" | "stderr", pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this[stream])) {
      if (Date.now() > deadline) {
        throw new Error(
          `chat ${stream} never matched ${pattern}; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

describe("chat.ts, the terminal client the quickstart uses", () => {
  let plugin: PluginProcess;
  let endpointFile: string;

  before(async () => {
    plugin = await PluginProcess.start("loopback-channel");
    await plugin.initialize();
    endpointFile = join(plugin.stateDir, "endpoint.json");
  });
  after(async () => {
    await plugin.dispose();
  });

  test("waits for the endpoint file, posts typed lines and prints replies from the stream", async () => {
    // Started before the channel, as when the daemon is still booting.
    const chat = new ChatProcess(["--endpoint-file", endpointFile, "--from", "dave", "--wait-secs", "20"]);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await plugin.peer.request("channel.start", { kind: "loopback" });
      await chat.waitFor("stderr", /connected to http:\/\/127\.0\.0\.1:\d+ as dave/);

      chat.child.stdin.write("hello from the terminal\n");
      const [published] = await plugin.waitPublished(1);
      assert.equal(published!.topic, "plugin.inbound.loopback");
      assert.deepEqual(
        { from: published!.event.payload.from, text: published!.event.payload.text },
        { from: "dave", text: "hello from the terminal" },
      );

      await plugin.peer.request("channel.send_outbound", {
        kind: "loopback",
        msg: { kind: "text", to: "dave", body: "hello dave, I am the agent" },
      });
      await chat.waitFor("stdout", /^nexo> hello dave, I am the agent$/m);

      // Lines typed just before the end of input still go out; then the chat exits cleanly.
      chat.child.stdin.end("one last thing\n");
      assert.equal(await chat.exited, 0);
      const last = await plugin.waitPublished(2);
      assert.equal(last[1]!.event.payload.text, "one last thing");
    } finally {
      chat.child.kill();
    }
  });

  test("with a URL and no server, it explains instead of crashing; bad flags exit 2", async () => {
    const lonely = new ChatProcess(["--url", "http://127.0.0.1:9", "--from", "eve"]);
    await lonely.waitFor("stderr", /no connection \(.*\); retrying/);
    lonely.child.stdin.end();
    assert.equal(await lonely.exited, 0);

    const confused = new ChatProcess(["--from", "eve"]);
    assert.equal(await confused.exited, 2);
    assert.match(confused.stderr, /give exactly one of --url .* and --endpoint-file/);
  });
});
