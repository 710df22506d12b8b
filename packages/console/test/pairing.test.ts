/**
 * Linking a WhatsApp phone from the console: a real daemon running the console and the compiled
 * WhatsApp plugin (FakeWhatsApp, WhatsApp's servers and the phone, behind the plugin's transport
 * seam), driven by Chromium. A channel no plugin can pair is refused inline; a started pairing
 * shows each QR code as the daemon pushes it (a new one replaces the old) and is cancelled from
 * the page; linking with a phone number refuses a bad number beside Start, shows the pairing code
 * large and copyable with its expiry, and ends expired when nobody types it; the next QR pairing is
 * scanned by the phone and shows "linked" with the device's JID; the audit view lists the calls;
 * last, the phone logs out and a code typed on it links it again. Its own small daemon: the main
 * console test's has no WhatsApp.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { microapp } from "@nexo/wire/schemas";
import { startTestDaemon, type TestDaemon } from "nexo-plugin-sdk/microapp/testing";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { FakeWhatsApp } from "../../channels/whatsapp/test/fake-whatsapp.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const CONSOLE = join(REPO, "packages/console/main.mjs");
const WHATSAPP = join(REPO, "packages/channels/whatsapp");
const SOCKET_MODULE = join(WHATSAPP, "test/fake-socket.ts");
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = process.env.NEXO_CONSOLE_SCREENSHOTS;
const TIMEOUT = 60_000;
const ACCOUNT = "447700900001:7@s.whatsapp.net";
const BY_NUMBER = "447700900002:3@s.whatsapp.net";

/** The page's globals these tests read (the tests' TypeScript has no DOM types). */
interface InPage {
  getComputedStyle(element: unknown): { fontSize: string };
  navigator: { clipboard: { readText(): Promise<string> } };
}

let daemon: TestDaemon;
let context: BrowserContext;
let page: Page;
let base: string;
let shots: string;
const fake = new FakeWhatsApp();

function consoleState(): string {
  return join(daemon.stateDir, "extensions", "console", "state");
}

/** The QR image's bytes as the page shows them (a data: URL), checked to be a PNG. */
async function shownQr(): Promise<string> {
  const src = (await page.getByTestId("pairing-qr").getAttribute("src")) ?? "";
  const prefix = "data:image/png;base64,";
  assert.ok(src.startsWith(prefix), src.slice(0, 40));
  assert.equal(Buffer.from(src.slice(prefix.length), "base64").subarray(1, 4).toString(), "PNG");
  return src;
}

async function stateIs(state: string): Promise<void> {
  await page.locator(`[data-testid=pairing-state]:text-is("${state}")`).waitFor();
}

async function pluginSocket(): Promise<void> {
  await fake.until("the pairing socket", () => (fake.connected ? true : undefined), TIMEOUT);
}

/** Starts a pairing by phone number and returns the code the page shows once WhatsApp issued it. */
async function codeShown(phone: string, qr: string): Promise<string> {
  await page.getByTestId("pairing-by-phone").check();
  await page.locator("input[name=phone]").fill(phone);
  await page.getByTestId("pairing-start").click();
  await pluginSocket();
  fake.showQr(qr);
  await stateIs("awaiting_user");
  const shown = await page.getByTestId("pairing-code").innerText();
  const asked = fake.codeRequests().at(-1);
  assert.equal(asked?.phoneNumber, "447700900002", "WhatsApp got the number as digits");
  assert.equal(shown, `${asked!.code.slice(0, 4)}-${asked!.code.slice(4)}`);
  return asked!.code;
}

describe("linking a WhatsApp phone from the console", { timeout: 300_000 }, () => {
  before(async () => {
    await fake.start();
    daemon = await startTestDaemon({
      microapps: {
        console: {
          path: CONSOLE,
          grants: ["agents_crud", "transcripts_read", "audit_read", "pairing_initiate"],
          config: { port: 0 },
        },
      },
      env: { NEXO_PLUGIN_INIT_TIMEOUT_MS: "30000" },
      files: {
        "plugins.yaml": [
          "plugins:",
          `  - dir: ${JSON.stringify(WHATSAPP)}`,
          "    env:",
          '      NODE_OPTIONS: "--import tsx"',
          `      WHATSAPP_SOCKET_MODULE: ${JSON.stringify(SOCKET_MODULE)}`,
          `      WHATSAPP_FAKE_ADDRESS: ${JSON.stringify(fake.address)}`,
          '      WHATSAPP_ALLOWED_NUMBERS: "*"',
          "",
        ].join("\n"),
      },
    });
    base = microapp.ConsoleEndpointSchema.parse(
      JSON.parse(readFileSync(join(consoleState(), microapp.CONSOLE_ENDPOINT_FILE), "utf8")),
    ).url;
    shots = mkdtempSync(join(tmpdir(), "nexo-console-shots-"));
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "nexo-console-chromium-")), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
      ],
      viewport: { width: 1280, height: 800 },
    });
    context.setDefaultTimeout(TIMEOUT);
    page = context.pages()[0] ?? (await context.newPage());
    const token = readFileSync(join(consoleState(), microapp.CONSOLE_TOKEN_FILE), "utf8").trim();
    await page.goto(`${base}#token=${encodeURIComponent(token)}`);
    await page.locator(".live.open").waitFor();
    await page.click('header nav a[href="/pairing"]');
    await page.getByRole("heading", { name: "Link a device" }).waitFor();
    // The agent list loads after the page: the picker chooses the first agent into the URL.
    await page.waitForURL(/[?&]agent=/);
  });

  after(async () => {
    await context?.close();
    await daemon?.stop();
    await fake.stop();
    if (shots) rmSync(shots, { recursive: true, force: true });
  });

  test("a channel no plugin here can pair is refused beside the Start button", async () => {
    await page.locator("input[name=channel]").fill("telegram");
    await page.getByTestId("pairing-start").click();
    await page.locator(".action .error", { hasText: "channel_unavailable" }).waitFor();
    assert.equal(await page.getByTestId("pairing").count(), 0, "no challenge was started");
  });

  test("a started pairing shows each QR code as it comes, and Cancel ends it cancelled", async () => {
    await page.locator("input[name=channel]").fill("whatsapp");
    await page.getByTestId("pairing-start").click();
    await pluginSocket();
    fake.showQr("2@first-ref,key,key,adv");
    await stateIs("qr_ready");
    const first = await shownQr();
    fake.showQr("2@second-ref,key,key,adv");
    await page.locator(`[data-testid=pairing-qr]:not([src="${first}"])`).waitFor();
    assert.notEqual(await shownQr(), first, "the new code replaced the old one");
    assert.equal(await page.getByTestId("pairing-qr").count(), 1);
    await page.getByTestId("pairing-cancel").click();
    await stateIs("cancelled");
    assert.equal(await page.getByTestId("pairing-qr").count(), 0, "no code is shown once cancelled");
    await fake.until("the pairing socket closed", () => (fake.connected ? undefined : true), TIMEOUT);
  });

  test("by phone number: a bad number is refused beside Start; the code shows large and copyable with its expiry, then expires", async () => {
    await page.getByTestId("pairing-by-phone").check();
    await page.locator("input[name=phone]").fill("07700 900002");
    await page.getByTestId("pairing-start").click();
    await page.locator(".action .error", { hasText: "E.164" }).waitFor();

    const code = await codeShown("+44 7700 900002", "2@code-ref,key,key,adv");
    assert.equal(await page.getByTestId("pairing-qr").count(), 0, "no QR code while linking by number");
    assert.match(await page.getByTestId("pairing-code-expiry").innerText(), /good until .+ unless used/);
    const fontPx = Number.parseFloat(
      await page
        .getByTestId("pairing-code")
        .evaluate((element) => (globalThis as unknown as InPage).getComputedStyle(element).fontSize),
    );
    assert.ok(fontPx >= 32, `the code is large (${fontPx}px)`);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(base).origin });
    await page.getByTestId("pairing-code-copy").click();
    await page.locator("[data-testid=pairing-code-copy]:text-is('Copy (copied)')").waitFor();
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText()),
      code,
      "the copy is the code itself",
    );
    const file = join(shots, "pairing-code.png");
    await page.screenshot({ path: file, fullPage: true });
    if (SCREENSHOTS !== undefined) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      copyFileSync(file, join(SCREENSHOTS, "pairing-code.png"));
    }

    fake.qrTimeout();
    await stateIs("expired");
    await page.locator(".pairing .note", { hasText: "pairing code was not entered in time" }).waitFor();
    assert.equal(await page.getByTestId("pairing-code").count(), 0, "no code is shown once expired");
    await page.locator("input[name=link-by][value=qr]").check();
  });

  test("the next pairing is scanned by the phone and shows linked with the device's JID", async () => {
    await page.getByTestId("pairing-start").click();
    await pluginSocket();
    fake.showQr("2@third-ref,key,key,adv");
    await stateIs("qr_ready");
    await shownQr();
    const file = join(shots, "pairing.png");
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 5_000, "pairing.png is a real screenshot");
    if (SCREENSHOTS !== undefined) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      copyFileSync(file, join(SCREENSHOTS, "pairing.png"));
    }
    fake.scan(ACCOUNT);
    await stateIs("linked");
    assert.equal(await page.getByTestId("pairing-device").innerText(), ACCOUNT);
    assert.equal(await page.getByTestId("pairing-cancel").count(), 0, "nothing left to cancel");

    // What the browser may read back of the challenge: the page's fields, nothing more.
    const challenge = await page.getByTestId("pairing").getAttribute("data-challenge");
    const token = readFileSync(join(consoleState(), microapp.CONSOLE_TOKEN_FILE), "utf8").trim();
    const login = await fetch(new URL("/api/login", base), {
      method: "POST",
      body: JSON.stringify({ token }),
    });
    const { csrf } = (await login.json()) as { csrf: string };
    const status = await fetch(new URL("/api/rpc/pairing/status", base), {
      method: "POST",
      headers: {
        cookie: (login.headers.get("set-cookie") ?? "").split(";")[0]!,
        "x-nexo-csrf": csrf,
        "content-type": "application/json",
      },
      body: JSON.stringify({ challenge_id: challenge }),
    });
    assert.equal(status.status, 200);
    assert.deepEqual(((await status.json()) as { result: unknown }).result, {
      challenge_id: challenge,
      state: "linked",
      channel: "whatsapp",
      device_jid: ACCOUNT,
    });
  });

  test("the audit view lists pairing/start and pairing/cancel; the daemon's log has them", async () => {
    await page.click('header nav a[href="/audit"]');
    const audit = page.getByTestId("audit");
    for (const method of ["nexo/admin/pairing/start", "nexo/admin/pairing/cancel"]) {
      await page.locator("input[name=method]").fill(method);
      await page.getByRole("button", { name: "Filter" }).click();
      await audit.getByText(method, { exact: true }).first().waitFor();
    }
    const starts = await daemon.auditTail({ microappId: "console", method: "nexo/admin/pairing/start" });
    assert.deepEqual(
      starts.entries.map((e) => e.result).sort(),
      ["error", "error", "ok", "ok", "ok"],
      "the refused channel and number, both QR pairings and the one by number",
    );
    const cancels = await daemon.auditTail({ microappId: "console", method: "nexo/admin/pairing/cancel" });
    assert.deepEqual(
      cancels.entries.map((e) => e.result),
      ["ok"],
    );
  });

  test("after the phone logs the device out, a code typed on the phone links it again", async () => {
    fake.logOut(ACCOUNT);
    await fake.until("the socket closed", () => (fake.connected ? undefined : true), TIMEOUT);
    await page.click('header nav a[href="/pairing"]');
    await page.getByRole("heading", { name: "Link a device" }).waitFor();
    const code = await codeShown("447700900002", "2@code-ref-2,key,key,adv");
    assert.equal(fake.enterCode(code, BY_NUMBER), true);
    await stateIs("linked");
    assert.equal(await page.getByTestId("pairing-device").innerText(), BY_NUMBER);
    assert.equal(await page.getByTestId("pairing-code").count(), 0);
  });
});
