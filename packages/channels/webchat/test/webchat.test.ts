/**
 * The web chat through a real daemon and a real browser: `nexo start` (the built CLI) with the
 * compiled plugin enabled from plugins.yaml, an agent on @nexo/mock-llm (scripted, streaming its
 * replies slowly enough to be seen growing), and Debian's Chromium driven by playwright-core on a
 * "shop" page that embeds the widget with one script tag. A visitor types and the reply streams
 * in; a reload keeps the conversation; a file goes up to the agent and one comes back; the plugin
 * is killed mid-conversation, comes back, the open widget reconnects and a reply queued while it
 * was down is delivered; a flood is rate limited; a page from another origin (and a client
 * without one) is refused; `nexo plugin check` passes; no visitor token reaches the log.
 * One daemon and one browser for the whole file. Run `npm run build` first.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Outbox } from "@nexo/channels-common";
import { MockLlmServer } from "@nexo/mock-llm";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import WebSocket from "ws";
import { runCli } from "../../../nexo/test/helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../../../nexo/test/helpers/daemon-dir.js";
import { type DaemonProcess, startDaemonProcess } from "../../../nexo/test/helpers/daemon-process.js";
import { waitFor } from "../../../nexo/test/helpers/wait.js";
import { lastUserText, writeChannelDaemonConfig } from "../../common/test/channel-daemon.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const CHROMIUM = "/usr/bin/chromium";
const TIMEOUT = 60_000;
const GREETING = "Hello there, I am the agent and this reply arrives in several pieces.";
const CHART = Buffer.from("\x89PNG\r\n\x1a\n a chart, not really");

/** The text of the last user message the model was sent. */

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A WebSocket handshake from Node with the given Origin: the HTTP status, or 101 and the first frame. */
function handshake(url: string, origin: string | undefined): Promise<{ status: number; first?: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, origin === undefined ? {} : { origin });
    ws.on("unexpected-response", (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.on("open", () => ws.send(JSON.stringify({ type: "hello" })));
    ws.on("message", (data) => {
      resolve({ status: 101, first: JSON.parse(String(data)) });
      ws.close();
    });
    ws.on("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe("the web chat widget through nexo start and Chromium", { timeout: 600_000 }, () => {
  const mock = new MockLlmServer();
  const config = mkdtempSync(join(tmpdir(), "nexo-webchat-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-webchat-state-"));
  const mediaDir = mkdtempSync(join(tmpdir(), "nexo-webchat-media-"));
  const pluginState = join(stateDir, "plugins", "webchat");
  let daemon: DaemonProcess;
  let pages: Server;
  let shop = "";
  let foreign = "";
  let chat = "";
  let context: BrowserContext;
  let page: Page;

  const widget = (p: Page = page) => p.locator("#nexo-webchat");
  const ready = (p: Page = page) =>
    p.locator(`#nexo-webchat[data-ready="true"]`).waitFor({ state: "attached" });
  const agentSaid = (text: string) =>
    page.locator(".msg.agent:not(.streaming)[data-id] .text", { hasText: text }).last().waitFor();
  const say = async (text: string) => {
    await page.locator('[data-testid="input"]').fill(text);
    await page.locator('[data-testid="send"]').click();
  };
  const storedToken = async () =>
    (await page.evaluate(
      'Object.entries(localStorage).find(([k]) => k.startsWith("nexo-webchat:"))?.[1] ?? ""',
    )) as string;
  const lastVisitorStatus = () => page.locator(".msg.visitor").last().getAttribute("data-status");

  before(async () => {
    await mock.start();
    mock.reset([
      // Two words a stream event, 120 ms apart: the reply takes about a second to write.
      { match: "hello", text: GREETING, delay_ms: 120 },
      {
        match: "what is in this file",
        text: "A shopping list. Here is a chart:\nMEDIA: " + join(mediaDir, "chart.png"),
      },
      { match: "what did I say first", text: "You said hello." },
      { match: "flood", text: "ok" },
    ]);
    writeFileSync(join(mediaDir, "chart.png"), CHART);
    const port = await freePort();
    chat = `http://127.0.0.1:${port}`;
    pages = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><html><body><h1>A shop</h1>` +
          `<script src="${chat}/widget.js" data-title="Ask the shop" data-open="true" async></script></body></html>`,
      );
    });
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
    const pagesPort = (pages.address() as AddressInfo).port;
    shop = `http://127.0.0.1:${pagesPort}/`;
    // Same server, another origin: the browser sends Origin http://localhost:<port>.
    foreign = `http://localhost:${pagesPort}/`;
    writeChannelDaemonConfig({
      config,
      stateDir,
      llmUrl: mock.url,
      plugin: "webchat",
      pluginDir: PLUGIN_DIR,
      pluginSettings: `    restart: { respawn: true, initial_delay_ms: 3000 }
    env:
      WEBCHAT_PORT: "${port}"
      WEBCHAT_ALLOWED_ORIGINS: "http://127.0.0.1:${pagesPort}"
      WEBCHAT_RATE_PER_MINUTE: "4"
      WEBCHAT_MEDIA_DIRS: ${mediaDir}
`,
    });
    daemon = await startDaemonProcess({ config, stateDir, logFile: process.env.WEBCHAT_TEST_DAEMON_LOG });
    await waitFor(
      "the chat to listen",
      () => (daemon.stderr().includes("webchat: listening on") ? true : undefined),
      TIMEOUT,
    );
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "nexo-webchat-chromium-")), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    context.setDefaultTimeout(TIMEOUT);
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    if (daemon !== undefined && daemon.child.exitCode === null) await daemon.stop();
    await mock.close();
    await new Promise<void>((resolve) => (pages ? pages.close(() => resolve()) : resolve()));
    rmSync(mediaDir, { recursive: true, force: true });
  });

  test("a visitor types and the agent's reply streams into the widget, then arrives whole", async () => {
    await page.goto(shop);
    await ready();
    assert.equal(await page.locator('[data-testid="title"]').textContent(), "Ask the shop");
    // Every text a growing reply showed, seen from inside the page.
    await page.evaluate(`(() => {
      const log = document.querySelector("#nexo-webchat").shadowRoot.querySelector(".log");
      window.seen = [];
      new MutationObserver(() => {
        for (const el of log.querySelectorAll(".streaming .text")) window.seen.push(el.textContent);
      }).observe(log, { subtree: true, childList: true, characterData: true });
    })()`);
    await say("hello, is anyone there?");
    await agentSaid(GREETING);
    const seen = (await page.evaluate("window.seen")) as string[];
    const partial = seen.filter((text) => text.length > 0 && text.length < GREETING.length);
    assert.ok(partial.length >= 2, `the reply was shown growing (saw ${JSON.stringify(seen)})`);
    for (const text of partial) assert.ok(GREETING.startsWith(text), `"${text}" is a prefix of the reply`);
    assert.equal(await page.locator(".streaming").count(), 0, "the whole reply replaced the pieces");
    assert.equal(await lastVisitorStatus(), "delivered");
    assert.equal(lastUserText(mock.requests().at(-1)), "hello, is anyone there?");
  });

  test("a reload keeps the visitor and the conversation", async () => {
    const visitor = await widget().getAttribute("data-visitor");
    const token = await storedToken();
    assert.match(token ?? "", /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    await page.reload();
    await ready();
    assert.equal(await widget().getAttribute("data-visitor"), visitor);
    await page.locator(".msg.visitor .text", { hasText: "hello, is anyone there?" }).waitFor();
    await agentSaid(GREETING);
    assert.equal(await page.locator(".msg.visitor").first().getAttribute("data-status"), "delivered");
    await say("what did I say first?");
    await agentSaid("You said hello.");
    assert.match(
      JSON.stringify(mock.requests().at(-1)?.body),
      /hello, is anyone there\?/,
      "one conversation",
    );
  });

  test("a file goes up to the agent, and the file its reply names comes back", async () => {
    await page.locator('[data-testid="file"]').setInputFiles({
      name: "list.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("eggs\nmilk\n"),
    });
    await say("what is in this file?");
    await agentSaid("A shopping list. Here is a chart:");
    const said = lastUserText(mock.requests().at(-1));
    const path = /\[document "list.txt" attached: (\S+) \(text\/plain, 10 B\)\]/.exec(said)?.[1] ?? "";
    assert.ok(path.startsWith(join(pluginState, "media", "in")), said);
    assert.equal(readFileSync(path, "utf8"), "eggs\nmilk\n");
    const link = page.locator(".msg.agent a", { hasText: "chart.png" }).last();
    const href = (await link.getAttribute("href")) ?? "";
    assert.match(href, new RegExp(`^${chat}/files/[0-9a-f]{32}/chart\\.png$`));
    const served = await fetch(href);
    assert.equal(served.headers.get("content-type"), "image/png");
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), CHART);
  });

  test("the plugin is killed mid-conversation: it comes back, the open widget reconnects, a queued reply is delivered", async () => {
    const { pid } = JSON.parse(readFileSync(join(pluginState, "endpoint.json"), "utf8")) as { pid: number };
    const visitor = (await widget().getAttribute("data-visitor"))!;
    process.kill(pid, "SIGKILL");
    await waitFor("the plugin to exit", () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    // A reply the outbox held when the process died, as the outbox itself writes it.
    new Outbox<{ text: string; attachments: [] }>({
      dir: join(pluginState, "outbox"),
      deliver: () => Promise.reject(new Error("never delivered from the test")),
      log: () => undefined,
    }).enqueue(
      visitor,
      { text: "A reply queued before the restart.", attachments: [] },
      "queued-before-restart",
    );
    await page.locator('[data-testid="state"]', { hasText: "Reconnecting" }).waitFor();
    await agentSaid("A reply queued before the restart.");
    await ready();
    const delivered = await waitFor("the queued reply's delivery status", () =>
      readFileSync(join(pluginState, "outbox", "delivery.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: string; status: string })
        .find((entry) => entry.id === "queued-before-restart"),
    );
    assert.equal(delivered.status, "sent");
    assert.deepEqual(readdirSync(join(pluginState, "outbox", "pending")), []);
    await say("what did I say first? (after the restart)");
    await agentSaid("You said hello.");
    assert.match(
      JSON.stringify(mock.requests().at(-1)?.body),
      /hello, is anyone there\?/,
      "the same conversation",
    );
  });

  test("a visitor who floods the chat is rate limited", async () => {
    for (let i = 1; i <= 6; i++) await say(`flood ${i}`);
    await page.locator(".msg.visitor.failed .status", { hasText: "too many messages" }).first().waitFor();
    // A refusal is answered at once, "received" only once nexo acknowledged the message: on a
    // loaded machine the first refusal comes before the acks of the floods let through. Read the
    // statuses when none is still "sending".
    await page.locator('.msg.visitor[data-status="sending"]').first().waitFor({ state: "detached" });
    const statuses = (await page
      .locator(".msg.visitor")
      .evaluateAll((els) => els.slice(-6).map((el) => el.getAttribute("data-status")))) as string[];
    assert.ok(statuses.includes("delivered"), JSON.stringify(statuses));
    assert.ok(statuses.includes("failed"), JSON.stringify(statuses));
    // The plugin's log line reaches the test through the daemon's stderr, after the page's status.
    await waitFor(
      "the rate limit's log line",
      () => (/dropped: over WEBCHAT_RATE_PER_MINUTE/.test(daemon.stderr()) ? true : undefined),
      TIMEOUT,
    );
  });

  test("a page from another origin, and a client without one, cannot open the chat", async () => {
    const other = await context.newPage();
    await other.goto(foreign);
    await other.locator('[data-testid="state"]', { hasText: "cannot be reached" }).waitFor();
    assert.equal(await widget(other).getAttribute("data-ready"), "false");
    await other.close();
    const ws = chat.replace("http:", "ws:") + "/ws";
    assert.equal((await handshake(ws, foreign.replace(/\/$/, ""))).status, 403);
    assert.equal((await handshake(ws, undefined)).status, 403);
    const allowed = await handshake(ws, shop.replace(/\/$/, ""));
    assert.equal(allowed.status, 101);
    assert.equal((allowed.first as { type: string }).type, "welcome");
    // Logged by the plugin, relayed by the daemon: it may come after the refusals themselves.
    await waitFor(
      "the refused origin's log line",
      () =>
        /WebSocket refused from .*origin http:\/\/localhost:\d+ is not in WEBCHAT_ALLOWED_ORIGINS/.test(
          daemon.stderr(),
        )
          ? true
          : undefined,
      TIMEOUT,
    );
  });

  test("nexo plugin check passes on the built plugin", async () => {
    const result = await runCli(["plugin", "check", PLUGIN_DIR], {
      timeoutMs: 120_000,
      env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /plugin check: passed/);
  });

  test("no visitor token reaches the daemon's log; the state is private", async () => {
    const token = await storedToken();
    assert.ok(token);
    await daemon.stop();
    const log = daemon.stderr();
    assert.match(log, /webchat: listening on http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(log.includes(token), false, "a visitor token is in the daemon's log");
    assert.equal(log.includes(token.split(".")[1]!), false);
    assert.equal(statSync(join(pluginState, "visitor-signing.key")).mode & 0o777, 0o600);
  });
});
