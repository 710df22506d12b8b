/**
 * nexo's AppServer driven by a JSON-RPC library from npm (`json-rpc-2.0`), with nothing of nexo
 * between the test and the wire: the real `nexo app-server` over stdio, newline-delimited JSON as
 * DotCraft's launchers speak it. The library sends requests and notifications, answers the
 * server's approval request as a method of its own, and surfaces errors with their code and data.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { JSONRPCClient, JSONRPCErrorException, JSONRPCServer, JSONRPCServerAndClient } from "json-rpc-2.0";
import { CLI_PATH } from "../../helpers/cli.js";

let mock: MockLlmServer;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  await mock.close();
});

describe("a plain JSON-RPC client from npm", () => {
  test("initialize, a thread, a turn with an approved file write, typed errors; EOF exits 0", async () => {
    mock.reset([
      { tool_calls: [{ id: "toolu_w", name: "Write", input: { file_path: "hello.txt", content: "hi\n" } }] },
      { text: "Wrote hello.txt." },
    ]);
    const workspace = mkdtempSync(join(tmpdir(), "nexo-plain-ws-"));
    const child = spawn(process.execPath, [CLI_PATH, "app-server"], {
      cwd: workspace,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NEXO_STATE_DIR: mkdtempSync(join(tmpdir(), "nexo-plain-state-")),
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_BASE_URL: mock.url,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      const rpc = new JSONRPCServerAndClient(
        new JSONRPCServer(),
        new JSONRPCClient((request) => {
          child.stdin.write(`${JSON.stringify(request)}\n`);
        }),
      );
      const notifications: Array<{ method: string; params: Record<string, unknown> }> = [];
      const decisions: string[] = [];
      rpc.addMethod("item/approval/request", (params: { approvalType: string }) => {
        decisions.push(params.approvalType);
        return { decision: "accept" };
      });
      let turnDone: (value: Record<string, unknown>) => void = () => undefined;
      const completed = new Promise<Record<string, unknown>>((resolve) => {
        turnDone = resolve;
      });
      const lines = createInterface({ input: child.stdout });
      lines.on("line", (line) => {
        const message = JSON.parse(line) as {
          id?: unknown;
          method?: string;
          params?: Record<string, unknown>;
        };
        if (message.method !== undefined && message.id === undefined) {
          notifications.push({ method: message.method, params: message.params ?? {} });
          if (message.method === "turn/completed") turnDone(message.params ?? {});
          return;
        }
        void rpc.receiveAndSend(message, undefined, undefined);
      });

      const init = await rpc.request(
        "initialize",
        { clientInfo: { name: "plain", version: "1.0.0" }, capabilities: { approvalSupport: true } },
        undefined,
      );
      assert.equal(init.serverInfo.protocolVersion, "1");
      rpc.notify("initialized", {}, undefined);

      const { thread } = await rpc.request(
        "thread/start",
        { identity: { channelName: "plain", userId: "me", workspacePath: workspace }, somethingNew: 1 },
        undefined,
      );
      const { turn } = await rpc.request(
        "turn/start",
        { threadId: thread.id, input: [{ type: "text", text: "write hello.txt" }] },
        undefined,
      );
      assert.equal(turn.status, "running");
      const done = (await completed) as { turn: { status: string } };
      assert.equal(done.turn.status, "completed");
      assert.deepEqual(decisions, ["file"]);
      assert.equal(readFileSync(join(workspace, "hello.txt"), "utf8"), "hi\n");
      assert.ok(notifications.some((n) => n.method === "item/approval/resolved"));

      await assert.rejects(
        async () => rpc.request("thread/read", { threadId: "no-such-thread" }, undefined),
        (error: unknown) => {
          assert.ok(error instanceof JSONRPCErrorException);
          assert.equal(error.code, -32010);
          assert.equal(typeof (error.data as { detail?: unknown }).detail, "string");
          return true;
        },
      );
      await assert.rejects(
        async () => rpc.request("initialize", { clientInfo: { name: "plain", version: "1" } }, undefined),
        (error: unknown) => error instanceof JSONRPCErrorException && error.code === -32003,
      );
      await assert.rejects(
        async () => rpc.request("no/such/method", {}, undefined),
        (error: unknown) => error instanceof JSONRPCErrorException && error.code === -32601,
      );
      child.stdin.end();
      assert.equal(await exited, 0);
      assert.ok(existsSync(join(workspace, "hello.txt")));
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
