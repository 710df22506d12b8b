/** `nexo dev mock-llm`: the command serves a script, prints its URL and reports bad scripts. */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const openAiBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-mock",
  stream: true,
  messages: [{ role: "user", content: text }],
  ...extra,
});

describe("nexo dev mock-llm", () => {
  const packageDir = fileURLToPath(new URL("../..", import.meta.url));
  const command = fileURLToPath(new URL("../../src/cli/dev-mock-llm.ts", import.meta.url));
  // Runs the command file under a fresh commander program, as cli/program.ts will.
  const program = `
    const { Command } = await import("commander");
    const { registerDevMockLlm } = await import(${JSON.stringify(command)});
    const program = new Command();
    registerDevMockLlm(program);
    await program.parseAsync(process.argv.slice(1), { from: "user" });
  `;
  const start = (args: string[]): ChildProcess =>
    spawn(
      process.execPath,
      ["--conditions=@nexo/source", "--import", "tsx", "--input-type=module", "-e", program, ...args],
      {
        cwd: packageDir,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
  const exited = (child: ChildProcess) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      let stderr = "";
      child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.on("close", (code) => resolve({ code, stderr }));
    });
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "nexo-mock-cli-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("prints the URL, serves the script, and exits cleanly on SIGTERM", async () => {
    const script = join(dir, "script.json");
    await writeFile(script, JSON.stringify({ responses: [{ text: "from the CLI" }] }));
    const child = start(["dev", "mock-llm", "--port", "0", "--script", script]);
    const done = exited(child);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        const timer = setTimeout(() => reject(new Error(`no URL printed; stdout: ${out}`)), 20_000);
        child.stdout?.setEncoding("utf8").on("data", (d: string) => {
          out += d;
          const line = out.split("\n")[0];
          if (out.includes("\n") && line) {
            clearTimeout(timer);
            resolve(line.trim());
          }
        });
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await post(`${url}/v1/chat/completions`, openAiBody("hi", { stream: false }));
      const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
      assert.equal(body.choices[0]?.message.content, "from the CLI");
    } finally {
      child.kill("SIGTERM");
    }
    const { code } = await done;
    assert.equal(code, 0);
  });

  it("reports an invalid script on stderr with exit code 2", async () => {
    const script = join(dir, "invalid.json");
    await writeFile(script, JSON.stringify([{ text: "a", status: 500 }]));
    const { code, stderr } = await exited(start(["dev", "mock-llm", "--script", script]));
    assert.equal(code, 2);
    assert.match(stderr, /invalid\.json: \[0\]\.text: "text" cannot be combined with "status"/);
  });
});
