/**
 * The operator console in a real daemon (`nexo-plugin-sdk/microapp/testing`: the project's `nexo`
 * CLI on a throwaway config dir, with the loopback channel plugin) driven by a real browser —
 * playwright-core over Debian's Chromium at /usr/bin/chromium. One daemon and one browser for the
 * whole file: the HTTP gate from the attacker's side first, then an operator's session page by
 * page, each action checked where it lands (the loopback channel, the daemon's audit log).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { microapp } from "@nexo/wire/schemas";
import { startTestDaemon, type TestDaemon } from "nexo-plugin-sdk/microapp/testing";
import { type BrowserContext, chromium, type Page } from "playwright-core";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const CONSOLE = join(REPO, "packages/console/main.mjs");
const NEXO = join(REPO, "packages/nexo/bin/nexo.js");
const LOOPBACK = join(REPO, "examples/plugins/loopback-channel");
/** A second microapp beside the console, for the Extensions page's restart button. */
const AGENT_CREATOR = join(REPO, "examples/microapps/agent-creator/main.mjs");
const CHROMIUM = "/usr/bin/chromium";
/** A real stdio MCP server (the daemon's MCP tests' fixture), run through tsx. */
const MCP_ECHO = join(REPO, "packages/nexo/test/fixtures/mcp-echo-server.ts");
const TSX = import.meta.resolve("tsx");
/** Set to a directory (docs/console) to keep the page screenshots there. */
const SCREENSHOTS = process.env.NEXO_CONSOLE_SCREENSHOTS;
const TIMEOUT = 60_000;

// Every capability the console's pages use (a missing one is shown by ui's describe(); the gate's
// denials are tested at the admin RPC, e.g. microapps/list granted and denied).
const GRANTS = [
  "agents_crud",
  "transcripts_read",
  "audit_read",
  "agent_events_subscribe_all",
  "operator_intervention",
  "escalations_read",
  "escalations_resolve",
  "plugin_doctor",
  "plugin_restart",
  "mcp_crud",
  "llm_keys_crud",
  "llm_complete",
];

const MCP_SECRET = "ghp_literal-secret-in-mcp-yaml-0123456789";

let daemon: TestDaemon;
let context: BrowserContext;
let page: Page;
let base: string;
let token: string;
let shots: string;
/** An LLM provider at the network edge: the console adds it, tests it, removes it. */
const mockLlm = new MockLlmServer({ script: [{ text: "ok" }, { text: "ok" }, { text: "ok" }] });
/** The test's own console session (cookie + CSRF header), for admin calls from outside the page. */
let apiSession: { cookie: string; csrf: string };

async function api(method: string, params: unknown): Promise<unknown> {
  const res = await fetch(new URL(`/api/rpc/${method}`, base), {
    method: "POST",
    headers: {
      cookie: apiSession.cookie,
      "x-nexo-csrf": apiSession.csrf,
      "content-type": "application/json",
    },
    body: JSON.stringify(params),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.result;
}

function consoleState(): string {
  return join(daemon.stateDir, "extensions", "console", "state");
}

/** The console's URL as its current process wrote it (a new port after a restart: `port: 0`). */
function consoleUrl(): string {
  return microapp.ConsoleEndpointSchema.parse(
    JSON.parse(readFileSync(join(consoleState(), microapp.CONSOLE_ENDPOINT_FILE), "utf8")),
  ).url;
}

/** Resolves once `done()` holds, checking as the daemon's log grows (every 25 ms, up to TIMEOUT). */
async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + TIMEOUT;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The loopback channel's listener, as its plugin wrote it (the port changes on a restart). */
function loopbackUrl(): string {
  const endpoint = JSON.parse(
    readFileSync(join(daemon.stateDir, "plugins", "loopback", "endpoint.json"), "utf8"),
  );
  return endpoint.url as string;
}

async function say(from: string, text: string): Promise<void> {
  const res = await fetch(`${loopbackUrl()}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ from, text }),
  });
  assert.equal(res.status, 202, await res.text());
}

/** The next replies the loopback channel has for `to` (waits up to `ms` for one). */
async function replies(to: string, ms = 30_000): Promise<string[]> {
  const res = await fetch(`${loopbackUrl()}/messages?to=${to}&timeout=${ms}`);
  const body = (await res.json()) as { messages: { text?: string }[] };
  return body.messages.map((m) => m.text ?? "");
}

async function shot(name: string): Promise<void> {
  const file = join(shots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  assert.ok(statSync(file).size > 5_000, `${name}.png is a real screenshot`);
  if (SCREENSHOTS !== undefined) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    copyFileSync(file, join(SCREENSHOTS, `${name}.png`));
  }
}

async function go(path: string): Promise<void> {
  await page.click(`header nav a[href="${path}"]`);
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [NEXO, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("the operator console", { timeout: 600_000 }, () => {
  before(async () => {
    daemon = await startTestDaemon({
      microapps: {
        console: { path: CONSOLE, grants: GRANTS, config: { port: 0 } },
        "agent-creator": { path: AGENT_CREATOR, grants: ["agents_crud"] },
      },
      env: {
        // A restarted plugin gets the time a loaded machine needs to answer initialize.
        NEXO_PLUGIN_INIT_TIMEOUT_MS: "30000",
        // A queue of one: the console falls behind at any burst and must catch up (agent_events/read).
        NEXO_MICROAPP_AGENT_EVENTS_QUEUE: "1",
      },
      files: {
        "plugins.yaml": `plugins:\n  - dir: ${JSON.stringify(LOOPBACK)}\n`,
        "mcp.yaml": [
          "servers:",
          "  handwritten:",
          "    transport: stdio",
          `    command: ${JSON.stringify(process.execPath)}`,
          '    args: ["-e", "setTimeout(() => {}, 1e9)"]',
          "    enabled: false",
          `    env: { GITHUB_TOKEN: ${JSON.stringify(MCP_SECRET)}, FROM_ENV: "\${HOME}" }`,
          "",
        ].join("\n"),
      },
    });
    base = consoleUrl();
    await mockLlm.start();
    token = readFileSync(join(consoleState(), microapp.CONSOLE_TOKEN_FILE), "utf8").trim();
    shots = mkdtempSync(join(tmpdir(), "nexo-console-shots-"));
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "nexo-console-chromium-")), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1280, height: 800 },
    });
    context.setDefaultTimeout(TIMEOUT);
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    await daemon?.stop();
    await mockLlm.close();
    if (shots) rmSync(shots, { recursive: true, force: true });
  });

  test("the console listens on loopback with a 0600 login token, and nexo console url prints the login URL", async () => {
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.equal(statSync(join(consoleState(), microapp.CONSOLE_TOKEN_FILE)).mode & 0o777, 0o600);
    assert.ok(
      daemon.log().some((l) => typeof l.msg === "string" && l.msg.includes(`console listening on ${base}`)),
      "the URL is in the daemon's log",
    );
    assert.ok(!daemon.stderr().includes(token), "the token is never logged");
    const printed = await runCli(["console", "url", "--state-dir", daemon.stateDir]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout.trim(), `${base}#token=${token}`);
    const missing = await runCli(["console", "url", "--state-dir", daemon.stateDir, "--id", "nothere"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /the console is not running/);
  });

  test("from the attacker's side: no session, a wrong token, a missing CSRF header, a foreign Host or Origin are refused", async () => {
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(new URL(path, base), { method: "POST", headers, body: JSON.stringify(body) });
    assert.equal((await post("/api/rpc/agents/list", {})).status, 401);
    assert.equal((await fetch(new URL("/api/live", base))).status, 401);
    assert.equal((await post("/api/login", { token: `${token}x` })).status, 401);
    assert.equal((await post("/api/login", { token: 42 })).status, 401);

    const login = await post("/api/login", { token });
    assert.equal(login.status, 200);
    const cookie = login.headers.get("set-cookie") ?? "";
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const { csrf } = (await login.json()) as { csrf: string };
    const session = cookie.split(";")[0]!;
    apiSession = { cookie: session, csrf };

    assert.equal((await post("/api/rpc/agents/list", {}, { cookie: session })).status, 403, "no CSRF header");
    assert.equal(
      (await post("/api/rpc/agents/list", {}, { cookie: session, "x-nexo-csrf": `${csrf}x` })).status,
      403,
      "a wrong CSRF header",
    );
    const foreign = await post(
      "/api/rpc/agents/list",
      {},
      {
        cookie: session,
        "x-nexo-csrf": csrf,
        origin: "http://evil.example",
      },
    );
    assert.equal(foreign.status, 403, "a cross-origin POST");
    const ok = await post("/api/rpc/agents/list", {}, { cookie: session, "x-nexo-csrf": csrf });
    assert.equal(ok.status, 200);
    assert.deepEqual(
      ((await ok.json()) as { result: { agents: { id: string }[] } }).result.agents.map((a) => a.id),
      ["tester"],
    );
    const notOffered = await post(
      "/api/rpc/secrets/write",
      { name: "X_Y", value: "v" },
      {
        cookie: session,
        "x-nexo-csrf": csrf,
      },
    );
    assert.equal(notOffered.status, 404, "a method the console does not offer");

    // DNS rebinding: a page whose name resolves to 127.0.0.1 sends its own Host header.
    const rebound = await new Promise<number>((resolve, reject) => {
      const url = new URL(base);
      import("node:http").then(({ request }) => {
        const req = request(
          { host: url.hostname, port: url.port, path: "/", headers: { host: "evil.example" } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end();
      }, reject);
    });
    assert.equal(rebound, 421);

    // A secret written by hand into mcp.yaml never reaches the browser; a ${NAME} reference does.
    const mcp = await post(
      "/api/rpc/mcp/get",
      { name: "handwritten" },
      { cookie: session, "x-nexo-csrf": csrf },
    );
    const text = await mcp.text();
    assert.equal(mcp.status, 200, text);
    assert.ok(!text.includes(MCP_SECRET), text);
    assert.match(text, /"GITHUB_TOKEN":"\[redacted\]"/);
    assert.match(text, /"FROM_ENV":"\$\{HOME\}"/);
  });

  test("a wrong token is refused in the browser; the login URL opens the console", async () => {
    await page.goto(base);
    await page.fill("input[name=token]", "not-the-token");
    await page.click("button[type=submit]");
    await page.getByText("wrong token").waitFor();
    await shot("login");
    await page.goto(`${base}#token=${encodeURIComponent(token)}`);
    await page.getByRole("heading", { name: "Agents" }).waitFor();
    assert.equal(new URL(page.url()).hash, "", "the token leaves the address bar");
    await page.locator(".live.open").waitFor();
  });

  test("agents: a refused change shows its issues inline; a new agent answers in the loopback channel; disable and enable", async () => {
    await page.getByRole("button", { name: "New agent" }).click();
    const form = page.getByTestId("agent-form");
    await form.locator("input[name=id]").fill("ana");
    await form.locator("input[name=provider]").fill("nope");
    await form.locator("input[name=model]").fill("some-model");
    await form.locator("input[name=bindings]").fill("loopback");
    await form.getByRole("button", { name: "Save" }).click();
    const errors = page.getByTestId("agent-errors");
    await errors.waitFor();
    assert.match(await errors.innerText(), /nope/);
    await form.locator("input[name=provider]").fill("scripted");
    await form.locator("input[name=model]").fill("nexo-scripted-demo");
    await form.locator("textarea[name=system_prompt]").fill("You are the front desk.");
    await form.getByRole("button", { name: "Save" }).click();
    await page.locator("tr[data-agent=ana]").waitFor();
    await form.waitFor({ state: "detached" });

    await say("alice", "hello ana");
    const answer = await replies("alice");
    assert.ok(answer.length > 0 && answer[0]!.length > 0, "ana answered alice on the loopback channel");

    const tester = page.locator("tr[data-agent=tester]");
    await tester.getByRole("button", { name: "Disable" }).click();
    await tester.getByText("disabled").waitFor();
    await tester.getByRole("button", { name: "Enable" }).click();
    await tester.getByText("enabled").waitFor();

    // Edit: the form opens with the agent as the daemon has it; the change lands in agents.yaml.
    await page.locator("tr[data-agent=ana]").getByRole("button", { name: "Edit" }).click();
    await page.getByRole("heading", { name: "Edit ana" }).waitFor();
    assert.equal(await form.locator("textarea[name=system_prompt]").inputValue(), "You are the front desk.");
    await form.locator("textarea[name=system_prompt]").fill("You are the front desk, briefly.");
    await form.getByRole("button", { name: "Save" }).click();
    await form.waitFor({ state: "detached" });
    const edited = (await api("agents/get", { agent_id: "ana" })) as { system_prompt: string };
    assert.equal(edited.system_prompt, "You are the front desk, briefly.");
    await shot("agents");
  });

  test("live conversations: the stored events on open, then each new one as it happens", async () => {
    await go("/live");
    await page.locator("select[name=agent]").selectOption("ana");
    const events = page.getByTestId("live-events");
    await events.getByText("hello ana").waitFor();
    const before = await events.locator("li").count();
    await say("alice", "is my kettle shipped yet");
    await events.getByText("is my kettle shipped yet").waitFor();
    // Evaluated in the page (a string: this file is compiled without the DOM's types).
    // Locators, not page functions: the console's CSP forbids the eval a string predicate needs.
    await events.locator("li.assistant").nth(1).waitFor();
    assert.ok((await events.locator("li").count()) >= before + 2, "the message and the reply arrived live");
    await replies("alice");
    await shot("live");
  });

  test("transcript search: full-text hits with the matched word marked", async () => {
    await go("/search");
    await page.locator("select[name=agent]").selectOption("ana");
    await page.locator("input[name=query]").fill("kettle");
    await page.getByRole("button", { name: "Search" }).click();
    const hits = page.getByTestId("search-hits");
    await hits.locator("mark", { hasText: "kettle" }).first().waitFor();
    assert.match(await hits.innerText(), /user/);
    // The channel and role filters are the daemon's (agent_events/search params), applied before ranking.
    await page.locator("input[name=channel]").fill("no-such-channel");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No transcript line matches.").waitFor();
    await page.locator("input[name=channel]").fill("loopback");
    await page.locator("select[name=role]").selectOption("user");
    await page.getByRole("button", { name: "Search" }).click();
    await hits.locator("mark", { hasText: "kettle" }).first().waitFor();
    const rows = await hits.locator("tbody tr").allInnerTexts();
    assert.ok(
      rows.length > 0 && rows.every((row) => /\buser\b/.test(row) && /loopback/.test(row)),
      rows.join("\n"),
    );
    // The time filters (since_ms / until_ms, the daemon's): a window that starts after today holds
    // nothing; one around today finds the line again.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await page.locator("input[name=from]").fill(day(2));
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No transcript line matches.").waitFor();
    await page.locator("input[name=from]").fill(day(-2));
    await page.locator("input[name=to]").fill(day(2));
    await page.getByRole("button", { name: "Search" }).click();
    await hits.locator("mark", { hasText: "kettle" }).first().waitFor();
    await shot("search");
  });

  test("takeover: pause, reply as the operator, resume; the held messages drain in order", async () => {
    await go("/live");
    await page.locator("select[name=agent]").selectOption("ana");
    await page.locator("a.take").first().click();
    const panel = page.getByTestId("takeover");
    const state = panel.getByTestId("takeover-state");
    await state.getByText("the agent answers").waitFor();
    await panel.getByRole("button", { name: "Pause" }).click();
    await state.getByText("paused by the operator").waitFor();

    await say("alice", "first held message");
    await say("alice", "second held message");
    await panel.locator("textarea[name=reply]").fill("A human here: your kettle left today.");
    await panel.getByRole("button", { name: "Send" }).click();
    await panel.getByText("reply sent").waitFor();
    assert.deepEqual(await replies("alice"), ["A human here: your kettle left today."]);

    await panel.getByRole("button", { name: "Resume" }).click();
    await panel.getByText("2 held message(s) written to the transcript").waitFor();
    const transcript = panel.getByTestId("takeover-events");
    await transcript.getByText("second held message").waitFor();
    const text = await transcript.innerText();
    const first = text.indexOf("first held message");
    const second = text.indexOf("second held message");
    assert.ok(first >= 0 && second > first, `held messages in order:\n${text}`);
    assert.ok(
      text.indexOf("A human here") < first || first >= 0,
      "the operator's reply is in the transcript",
    );
    await panel.getByTestId("takeover-state").getByText("the agent answers").waitFor();
    await shot("takeover");
  });

  test("escalations: an agent's escalation is listed and dismissed", async () => {
    const call = await daemon.callTool("escalate", {
      summary: "the refund I was promised",
      reason: "complaint",
      urgency: "high",
    });
    assert.equal(call.success, true, call.text);
    await go("/escalations");
    const table = page.getByTestId("escalations");
    await table.getByText("the refund I was promised").waitFor();
    await table.locator("input[name=dismiss_reason]").fill("refund already issued");
    await shot("escalations");
    await table.getByRole("button", { name: "Dismiss" }).click();
    await page.getByText("Nobody is waiting for a human.").waitFor();
  });

  test("escalations: taking over a loopback conversation's escalation pauses it, the operator replies, resume", async () => {
    // The agent escalates from a real channel conversation: carol on the loopback channel.
    await say(
      "carol",
      'call escalate {"summary":"carol wants a human","reason":"complaint","urgency":"high"}',
    );
    const answer = await replies("carol");
    assert.ok(
      answer.some((text) => /escalate/i.test(text)),
      answer.join(" | "),
    );
    await go("/escalations");
    // Still the page of the previous test: read the list again.
    await page.getByRole("button", { name: "Refresh" }).click();
    const table = page.getByTestId("escalations");
    const row = table.locator("tr", { hasText: "carol wants a human" });
    await row.waitFor();
    assert.match(await row.innerText(), /loopback · carol/);
    await row.getByRole("button", { name: "Take over" }).click();
    const panel = page.getByTestId("takeover");
    await panel.getByTestId("takeover-state").getByText("paused by the operator").waitFor();
    assert.equal(await page.locator("input[name=contact]").inputValue(), "carol");
    await say("carol", "are you there?");
    await panel.locator("textarea[name=reply]").fill("Operator here, carol: I am on it.");
    await panel.getByRole("button", { name: "Send" }).click();
    await panel.getByText("reply sent").waitFor();
    assert.deepEqual(await replies("carol"), ["Operator here, carol: I am on it."]);
    await panel.getByRole("button", { name: "Resume" }).click();
    await panel.getByText("1 held message(s) written to the transcript").waitFor();
    await panel.getByTestId("takeover-state").getByText("the agent answers").waitFor();
    const resolved = (await api("escalations/list", { filter: "resolved" })) as {
      entries: { scope: { contact_id?: string }; state: { by?: unknown } }[];
    };
    const carol = resolved.entries.find((e) => e.scope.contact_id === "carol");
    assert.ok(carol, "carol's escalation is resolved");
    assert.match(JSON.stringify(carol.state.by), /takeover/);
  });

  test("live view lag: after a burst the daemon reports the console lagged; the open page reads the missed events back", async () => {
    await go("/live");
    await page.locator("select[name=agent]").selectOption("ana");
    const events = page.getByTestId("live-events");
    await events.getByText("hello ana").waitFor();
    const caughtBefore = Number(await page.locator(".live").getAttribute("data-caught-up"));
    const lagsBefore = daemon.log().filter((l) => String(l.msg).includes("fell behind")).length;
    // Held messages are written in one transaction on resume: a burst the queue of one cannot hold.
    const scope = {
      kind: "conversation",
      agent_id: "ana",
      channel: "loopback",
      account_id: "default",
      contact_id: "dave",
    };
    await api("processing/pause", { scope, reason: "lag test" });
    for (const n of [1, 2, 3, 4]) await say("dave", `dave burst ${n}`);
    // The daemon logs each message it holds for the paused conversation: resume once all four are.
    const held = () =>
      daemon.log().filter((l) => String(l.msg).startsWith("message held") && l.contact === "dave").length;
    await until("dave's four messages held", () => held() >= 4);
    await api("processing/resume", { scope });
    for (const n of [1, 2, 3, 4]) await events.getByText(`dave burst ${n}`).waitFor();
    assert.ok(
      daemon.log().filter((l) => String(l.msg).includes("fell behind")).length > lagsBefore,
      "the daemon dropped frames and told the console",
    );
    await page.locator(`.live:not([data-caught-up="${caughtBefore}"])`).waitFor();
    assert.ok(Number(await page.locator(".live").getAttribute("data-caught-up")) > caughtBefore);
    const read = await daemon.auditTail({ microappId: "console", method: "nexo/admin/agent_events/read" });
    assert.ok(read.entries.length > 0, "read back with agent_events/read");
  });

  test("live view: Load earlier reads back page after page to the oldest event, the rows in sight staying in place, live ones once; one conversation's own pages", async () => {
    // More than two of the view's reads (200 each): pauses and resumes of a conversation nobody
    // writes in, each an event of ana's.
    const scope = {
      kind: "conversation",
      agent_id: "ana",
      channel: "loopback",
      account_id: "default",
      contact_id: "erin",
    };
    for (let i = 0; i < 220; i++) {
      await api("processing/pause", { scope, reason: `paging ${i}` });
      await api("processing/resume", { scope });
    }
    const stored = (await api("agent_events/list", { agent_id: "ana", limit: 1000 })) as {
      events: { session_id: string; seq: number }[];
    };
    assert.ok(stored.events.length > 400, `${stored.events.length} events stored`);
    // A fresh page: nothing held from the live stream, only what the view reads back.
    await page.reload();
    await go("/live");
    await page.locator("select[name=agent]").selectOption("ana");
    const events = page.getByTestId("live-events");
    const keys = async () =>
      (await events
        .locator("li")
        .evaluateAll((rows) =>
          rows.map((row) => (row as unknown as { dataset: { key: string } }).dataset.key),
        )) as string[];
    await page.locator('[data-testid=live-events][data-count="200"]').waitFor();
    assert.equal(await events.getByText("hello ana").count(), 0, "the oldest events are not read yet");

    const earlier = page.getByRole("button", { name: "Load earlier" });
    await earlier.scrollIntoViewIfNeeded();
    const first = (await keys())[0]!;
    const row = events.locator(`li[data-key="${first}"]`);
    const at = (await row.boundingBox())!;
    // Live events arrive while the earlier page is read: each must show once.
    await Promise.all([
      earlier.click(),
      api("processing/pause", { scope, reason: "live meanwhile" }).then(() =>
        api("processing/resume", { scope }),
      ),
    ]);
    await page
      .locator(
        '[data-testid=live-events]:not([data-count="200"]):not([data-count="201"]):not([data-count="202"])',
      )
      .waitFor();
    const moved = (await row.boundingBox())!;
    assert.ok(Math.abs(moved.y - at.y) <= 1, `the row in sight stayed in place: ${at.y} → ${moved.y}`);
    assert.ok((await keys()).indexOf(first) >= 200, "the earlier page went in above it");

    // On to the oldest stored event.
    for (let pages = 0; (await earlier.count()) > 0; pages++) {
      assert.ok(pages < 5, "a few pages reach the oldest event");
      const count = await events.getAttribute("data-count");
      await earlier.click();
      await page
        .locator(`[data-testid=live-events]:not([data-count="${count}"])`)
        .or(page.getByText("The oldest stored event."))
        .first()
        .waitFor();
    }
    await page.getByText("The oldest stored event.").waitFor();
    await events.getByText("hello ana").first().waitFor();
    const now = (await api("agent_events/list", { agent_id: "ana", limit: 1000 })) as typeof stored;
    const all = await keys();
    assert.equal(new Set(all).size, all.length, "no event twice");
    const shown = new Set(all);
    assert.deepEqual(
      now.events.map((e) => `${e.session_id}#${e.seq}`).filter((key) => !shown.has(key)),
      [],
      "every stored event is shown, the live ones included",
    );
    const lists = await daemon.auditTail({ microappId: "console", method: "nexo/admin/agent_events/list" });
    assert.ok(lists.entries.every((e) => e.result === "ok"));

    // One conversation picked: its earlier pages are its own (agent_events/read back from its
    // oldest seq shown), down to its seq 1, each seq once.
    const calls = async (method: string) =>
      (
        await daemon.auditTail({
          microappId: "console",
          method: `nexo/admin/agent_events/${method}`,
          limit: 1,
        })
      ).total;
    await page.reload();
    await go("/live");
    await page.locator("select[name=agent]").selectOption("ana");
    await earlier.waitFor();
    const erin = "conversation:ana/loopback/default/erin";
    await page.locator("select[name=session]").selectOption(erin);
    const erinCount = now.events.filter((e) => e.session_id === erin).length;
    assert.ok(Number(await events.getAttribute("data-count")) < erinCount, "erin's oldest are not read yet");
    const [listsBefore, readsBefore] = [await calls("list"), await calls("read")];
    for (let pages = 0; (await earlier.count()) > 0; pages++) {
      assert.ok(pages < 5, "a few pages reach erin's first event");
      const count = await events.getAttribute("data-count");
      await earlier.scrollIntoViewIfNeeded();
      const top = events.locator(`li[data-key="${(await keys())[0]!}"]`);
      const was = (await top.boundingBox())!;
      await earlier.click();
      await page
        .locator(`[data-testid=live-events]:not([data-count="${count}"])`)
        .or(page.getByText("This conversation's oldest stored event."))
        .first()
        .waitFor();
      const is = (await top.boundingBox())!;
      assert.ok(Math.abs(is.y - was.y) <= 1, `the row in sight stayed in place: ${was.y} → ${is.y}`);
    }
    await page.getByText("This conversation's oldest stored event.").waitFor();
    const seqs = (await keys()).map((key) => Number(key.slice(key.lastIndexOf("#") + 1)));
    assert.deepEqual(
      seqs,
      Array.from({ length: erinCount }, (_, i) => i + 1),
    );
    assert.equal(await calls("list"), listsBefore, "no page of the agent's was read for erin's");
    assert.ok((await calls("read")) >= readsBefore + 2, "erin's pages were read from her stream");
    await page.locator("select[name=session]").selectOption("");
  });

  test("extension health: plugins with their state, and a restart button", async () => {
    await go("/extensions");
    const row = page.locator("tr[data-plugin=loopback]");
    await row.getByText("running").waitFor();
    await row.getByRole("button", { name: "Restart" }).click();
    await page
      .getByTestId("extensions-note")
      .getByText(/loopback restarted: running, pid \d+/)
      .waitFor();
    // Microapps (microapps/list): the console and agent-creator, with pid, restarts and capabilities.
    const console_ = page.locator("tr[data-microapp=console]");
    await console_.getByText("running").waitFor();
    assert.match(await console_.innerText(), /\b\d{2,}\b/, "its pid");
    await console_.getByText(`${GRANTS.length} granted`).waitFor();
    await console_.getByText("this console").waitFor();
    // Another microapp's restart button (microapps/restart): a new process, shown in the row.
    const creator = page.locator("tr[data-microapp=agent-creator]");
    await creator.getByText("running").waitFor();
    const before = daemon.microapp("agent-creator")!;
    await creator.getByRole("button", { name: "Restart" }).click();
    const note = page.getByTestId("extensions-note");
    await note
      .getByText(new RegExp(`agent-creator restarted: running, pid \\d+; it was pid ${before.pid}`))
      .waitFor();
    const after = await daemon.waitForMicroapp("agent-creator", { after: before.incarnation });
    assert.notEqual(after.pid, before.pid);
    assert.match(await note.innerText(), new RegExp(`pid ${after.pid}`));
    await creator.getByText(String(after.pid), { exact: true }).waitFor();
    await shot("extensions");
  });

  test("LLM providers: add one with its key stored as a secret, test it with a one-word completion, remove it", async () => {
    await go("/providers");
    const key = "sk-console-test-key-0123456789abcdef";
    const form = page.locator("form.inline-form").first();
    await form.locator("input[name=id]").fill("mockllm");
    await form.locator("input[name=base_url]").fill(mockLlm.url);
    await form.locator("input[name=key]").fill(key);
    await form.getByRole("button", { name: "Add provider" }).click();
    const row = page.locator("tr[data-provider=mockllm]");
    await row.getByText("$LLM_MOCKLLM_API_KEY").waitFor(); // the key went to the secret store
    await row.locator("input[name=model]").fill("mock-model");
    await row.getByRole("button", { name: "Test" }).click();
    await row.getByText("answered: ok").waitFor();
    const asked = mockLlm.requests().find((r) => r.path.endsWith("/chat/completions"));
    assert.ok(asked, "the daemon called the provider");
    assert.equal(asked.headers.authorization, `Bearer ${key}`, "with the key the console stored");
    assert.ok(!(await page.content()).includes(key), "the key never comes back to the browser");
    await shot("providers");
    await row.getByRole("button", { name: "Remove" }).click();
    await row.waitFor({ state: "detached" });
  });

  test("MCP servers: add a real stdio server and see it connect with its tools, remove it; a hand-written secret stays hidden", async () => {
    await page.getByTestId("mcp-servers").getByText("handwritten").waitFor();
    assert.ok(!(await page.content()).includes(MCP_SECRET));
    const form = page.locator("form.inline-form").nth(1);
    await form.locator("input[name=name]").fill("echo");
    await form.locator("input[name=target]").fill(`${process.execPath} --import ${TSX} ${MCP_ECHO}`);
    await form.getByRole("button", { name: "Add and test" }).click();
    await page
      .getByTestId("mcp-result")
      .getByText(/echo: connected, [1-9]\d* tool\(s\)/)
      .waitFor();
    const row = page.locator("tr[data-mcp=echo]");
    await row.waitFor();
    await row.getByRole("button", { name: "Remove" }).click();
    await row.waitFor({ state: "detached" });
  });

  test("the audit view: every action of the session, ok or failed, filterable", async () => {
    await go("/audit");
    const audit = page.getByTestId("audit");
    for (const method of [
      "nexo/admin/agents/upsert",
      "nexo/admin/processing/pause",
      "nexo/admin/processing/intervention",
      "nexo/admin/processing/resume",
      "nexo/admin/escalations/resolve",
      "nexo/admin/plugins/restart",
      "nexo/admin/microapps/list",
      "nexo/admin/microapps/restart",
      "nexo/admin/llm_providers/upsert",
      "nexo/admin/llm/complete",
      "nexo/admin/mcp/upsert",
      "nexo/admin/mcp/delete",
    ]) {
      // Filtered by method (the daemon pages the log): the session's calls outnumber one page.
      await page.locator("input[name=method]").fill(method);
      await page.getByRole("button", { name: "Filter" }).click();
      await audit.getByText(method, { exact: true }).first().waitFor();
    }
    await page.locator("input[name=method]").fill("");
    // The agent the daemon refused (provider "nope") is there as an error.
    await page.locator("select[name=result]").selectOption("error");
    await page.getByRole("button", { name: "Filter" }).click();
    await audit.locator("tbody tr", { hasNotText: "error" }).first().waitFor({ state: "detached" });
    await audit.getByText("nexo/admin/agents/upsert").first().waitFor();
    await shot("audit");
    // The same rows in the daemon's own log.
    const failed = await daemon.auditTail({ microappId: "console", result: "error" });
    assert.ok(failed.entries.some((e) => e.method === "nexo/admin/agents/upsert"));
    const ok = await daemon.auditTail({ microappId: "console", method: "nexo/admin/processing/resume" });
    assert.equal(ok.entries[0]?.result, "ok");
  });

  test("the console restarts itself: asked first, answered before it goes, back on a new process for a new login", async () => {
    const before = daemon.microapp("console")!;
    await go("/extensions");
    const row = page.locator("tr[data-microapp=console]");
    await row.getByRole("button", { name: "Restart" }).click();
    await row.getByTestId("restart-self").getByRole("button", { name: "Restart the console" }).click();
    // The daemon answered before it stopped the console: the page shows the answer.
    await page
      .getByTestId("extensions-note")
      .getByText(`The console is restarting (it ran as pid ${before.pid})`, { exact: false })
      .waitFor();
    const after = await daemon.waitForMicroapp("console", { after: before.incarnation });
    assert.notEqual(after.pid, before.pid);
    // Its endpoint file was written before it answered initialize, so before "microapp ready".
    // Sessions lived in the old process: the new one is logged in to again, with the same token.
    base = consoleUrl();
    assert.equal(readFileSync(join(consoleState(), microapp.CONSOLE_TOKEN_FILE), "utf8").trim(), token);
    await page.goto(`${base}#token=${encodeURIComponent(token)}`);
    await page.getByRole("heading", { name: "Agents" }).waitFor();
    await go("/extensions");
    await page.locator("tr[data-microapp=console]").getByText(String(after.pid), { exact: true }).waitFor();
    const rows = await daemon.auditTail({ microappId: "console", method: "nexo/admin/microapps/restart" });
    assert.ok(
      rows.entries.length >= 2 && rows.entries.every((e) => e.result === "ok"),
      "both restarts (agent-creator's, the console's own) audited ok",
    );
  });
});
