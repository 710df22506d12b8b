/**
 * `workspace/commitMessage/suggest` and `welcome/suggestions` through the real `nexo app-server`
 * and a mock model: the diff (tracked and new files) reaches the model and its message comes back,
 * the path rule and the typed errors; welcome suggestions from the workspace summary, read
 * defensively, cached by fingerprint, and switched off through `workspace/config/update`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { type AppServerProcess, appServerTestbed } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, LLM_YAML, managedServer } from "./management-helpers.js";

const { mock, start } = appServerTestbed();
const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

/** A git repository with one commit of a.txt, then a.txt changed and new.txt added (untracked). */
function repository(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-as-git-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: dir });
  git("init", "-q");
  writeFileSync(join(dir, "a.txt"), "first line\n");
  git("add", "a.txt");
  git("commit", "-q", "-m", "start");
  writeFileSync(join(dir, "a.txt"), "first line\nMARKER-CHANGED-LINE\n");
  writeFileSync(join(dir, "new.txt"), "MARKER-NEW-FILE\n");
  return dir;
}

/** The text of the last request the mock model received. */
function lastPrompt(): string {
  return JSON.stringify(mock().requests().at(-1)?.body);
}

describe("workspace/commitMessage/suggest", () => {
  test("the diff of the named paths reaches the thread's model; its message comes back", async () => {
    const workspace = repository();
    const server = start({ cwd: workspace });
    await server.initialize();
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test", workspacePath: workspace },
    });
    mock().reset([{ match: "MARKER-CHANGED-LINE", text: "```\nAdd the marker lines\n\nBoth files.\n```" }]);
    const { message } = await server.request<{ message: string }>("workspace/commitMessage/suggest", {
      threadId: thread.id,
      paths: ["a.txt", "new.txt"],
    });
    assert.equal(message, "Add the marker lines\n\nBoth files.");
    const prompt = lastPrompt();
    assert.match(prompt, /\+MARKER-CHANGED-LINE/);
    assert.match(prompt, /\+MARKER-NEW-FILE/);
    assert.match(prompt, /commit message/);

    // Only the named paths, cut to maxDiffChars.
    mock().reset([{ text: "Change a" }]);
    await server.request("workspace/commitMessage/suggest", {
      threadId: thread.id,
      paths: ["a.txt"],
      maxDiffChars: 40,
    });
    assert.doesNotMatch(lastPrompt(), /MARKER-NEW-FILE/);
    assert.match(lastPrompt(), /diff cut: \d+ more characters/);

    // Nothing of it is a thread: still one thread, no transcript in it, no thread event.
    const { data } = await server.request<{ data: unknown[] }>("thread/list", {
      identity: { channelName: "test", workspacePath: workspace },
    });
    assert.equal(data.length, 1);
    const read = await server.request<{ thread: { turns: unknown[] } }>("thread/read", {
      threadId: thread.id,
      includeTurns: true,
    });
    assert.deepEqual(read.thread.turns, []);
    assert.equal(server.notifications("thread/started").length, 1);
    assert.equal(server.notifications("turn/started").length, 0);
  });

  test("typed errors: paths outside the workspace, no changes, not a git repository, unknown thread", async () => {
    const workspace = repository();
    const server = start({ cwd: workspace });
    await server.initialize();
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test", workspacePath: workspace },
    });
    const before = mock().requests().length;
    for (const [paths, reason] of [
      [["../outside.txt"], /outside the workspace/],
      [["sub/../../x"], /outside the workspace/],
      [["/etc/passwd"], /is absolute/],
      [[], /paths is empty/],
      [["unchanged-or-missing.txt"], /nothing changed/],
    ] as const) {
      const reply = await server.call("workspace/commitMessage/suggest", { threadId: thread.id, paths });
      assert.equal(reply.error?.code, -32602, JSON.stringify(paths));
      assert.match(reply.error?.data?.detail ?? "", reason);
    }
    const plain = mkdtempSync(join(tmpdir(), "nexo-as-nogit-"));
    writeFileSync(join(plain, "a.txt"), "x\n");
    const other = await server.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test", workspacePath: plain },
    });
    const notGit = await server.call("workspace/commitMessage/suggest", {
      threadId: other.thread.id,
      paths: ["a.txt"],
    });
    assert.equal(notGit.error?.code, -32602);
    assert.match(notGit.error?.data?.detail ?? "", /is not a git repository/);
    const missing = await server.call("workspace/commitMessage/suggest", {
      threadId: "nope",
      paths: ["a.txt"],
    });
    assert.equal(missing.error?.code, -32010);
    assert.equal(mock().requests().length, before, "no refused request reached the model");
    // The connection is still fine.
    assert.equal((await server.call("thread/list", { identity: { channelName: "test" } })).error, undefined);
  });
});

describe("welcome/suggestions", () => {
  test("from the workspace summary; garbage gives none; cached by fingerprint; the flag is advertised", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "nexo-as-welcome-"));
    writeFileSync(join(workspace, "README.md"), "# Frobnicator\nA tool that frobs widgets.\n");
    writeFileSync(join(workspace, "frob.py"), "print('frob')\n");
    const server = start({ cwd: workspace });
    const init = await server.initialize();
    assert.deepEqual((init.result as { capabilities: { extensions?: unknown } }).capabilities.extensions, {
      welcomeSuggestions: true,
    });
    await server.request("thread/start", {
      identity: { channelName: "test", workspacePath: workspace },
      displayName: "Speed up frobbing",
    });
    mock().reset([
      {
        text: 'Here you go:\n[{"title": "Run the tests", "prompt": "Run the test suite", "reason": "no CI"}, {"title": 5}, {"title": "Explain frob.py", "prompt": "What does frob.py do?"}, {"title": "Third", "prompt": "x"}]',
      },
    ]);
    const identity = { channelName: "desktop", workspacePath: workspace };
    type Result = {
      items: Array<Record<string, string>>;
      source: string;
      fingerprint: string;
      generatedAt: string;
    };
    const first = await server.request<Result>("welcome/suggestions", { identity, maxItems: 2 });
    assert.equal(first.source, "dynamic");
    assert.deepEqual(first.items, [
      { title: "Run the tests", prompt: "Run the test suite", reason: "no CI" },
      { title: "Explain frob.py", prompt: "What does frob.py do?" },
    ]);
    const prompt = lastPrompt();
    assert.match(prompt, /Frobnicator/);
    assert.match(prompt, /frob\.py/);
    assert.match(prompt, /Speed up frobbing/);

    const requests = mock().requests().length;
    const again = await server.request<Result>("welcome/suggestions", { identity, maxItems: 2 });
    assert.deepEqual(again, first, "the same workspace state is answered from the cache");
    assert.equal(mock().requests().length, requests);

    writeFileSync(join(workspace, "new-file.txt"), "x\n");
    mock().reset([{ text: "I would rather not answer in JSON." }]);
    const garbage = await server.request<Result>("welcome/suggestions", { identity });
    assert.equal(garbage.source, "none");
    assert.deepEqual(garbage.items, []);
    assert.notEqual(garbage.fingerprint, first.fingerprint);

    const elsewhere = await server.call("welcome/suggestions", {
      identity: { channelName: "desktop", workspacePath: mkdtempSync(join(tmpdir(), "nexo-as-other-")) },
    });
    assert.equal(elsewhere.error?.code, -32602);
    assert.match(elsewhere.error?.data?.detail ?? "", /not this server's workspace/);
  });

  test("welcomeSuggestionsEnabled false (appserver.yaml) answers none without asking the model", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server } = await managedServer(config, processes);
    const off = await server.request<{ welcomeSuggestionsEnabled: boolean }>("workspace/config/update", {
      welcomeSuggestionsEnabled: false,
    });
    assert.equal(off.welcomeSuggestionsEnabled, false);
    assert.match(config.read("appserver.yaml"), /welcome_suggestions: false/);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.deepEqual(changed.params?.regions, ["welcomeSuggestions"]);
    const reply = await server.request<{ source: string; items: unknown[] }>("welcome/suggestions", {
      identity: { channelName: "desktop", workspacePath: server.workspace },
    });
    assert.deepEqual([reply.source, reply.items], ["none", []]);
  });
});
