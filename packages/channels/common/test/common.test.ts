/**
 * The shared channel parts on their own: the outbound queue (order per recipient, retry after the
 * network's delay, permanent failures, a restart reading the queue back, an unreadable file set
 * aside), per-contact rate limits, the allowlists, the MEDIA: directive, media directories (a
 * symbolic link cannot smuggle a file out) and stderr redaction (in a child process, since it
 * patches the process's stderr).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  Allowlist,
  KnownContacts,
  MediaPathRefusedError,
  MediaRoots,
  OutboundPolicy,
  Outbox,
  type OutboxRecord,
  PermanentDeliveryError,
  RateLimiter,
  Redactor,
  RetryableDeliveryError,
  sendableAttachments,
  splitReplyMedia,
  splitText,
} from "@nexo/channels-common";
import { ChannelRecipientError, ChannelUnsupportedError } from "nexo-plugin-sdk";

const temp = (name: string) => mkdtempSync(join(tmpdir(), `nexo-channels-${name}-`));

/** A deliver function the test answers by hand, one call at a time. */
function scriptedNetwork() {
  const calls: Array<{
    record: OutboxRecord<string>;
    resolve: (ids: string[]) => void;
    reject: (e: Error) => void;
  }> = [];
  let wake: (() => void) | undefined;
  return {
    calls,
    deliver: (record: OutboxRecord<string>) =>
      new Promise<string[]>((resolve, reject) => {
        calls.push({ record: structuredClone(record), resolve, reject });
        wake?.();
      }),
    async call(n: number) {
      while (calls.length < n) await new Promise<void>((resolve) => (wake = resolve));
      return calls[n - 1]!;
    },
  };
}

describe("Outbox", () => {
  test("one message at a time per recipient, in order; other recipients are not held up", async () => {
    const net = scriptedNetwork();
    const outbox = new Outbox<string>({ dir: temp("outbox"), deliver: net.deliver, log: () => {} });
    outbox.start();
    outbox.enqueue("ann", "a1", "id-a1");
    outbox.enqueue("ann", "a2", "id-a2");
    outbox.enqueue("bob", "b1", "id-b1");
    assert.deepEqual([(await net.call(1)).record.item, (await net.call(2)).record.item], ["a1", "b1"]);
    net.calls[0]!.resolve(["m1"]);
    assert.equal((await net.call(3)).record.item, "a2");
    net.calls[1]!.resolve(["m2"]);
    net.calls[2]!.resolve(["m3"]);
    assert.equal((await outbox.settled("id-a2", 5_000))?.status, "sent");
    assert.deepEqual(outbox.status("id-a1")?.delivered_ids, ["m1"]);
    await outbox.stop();
  });

  test("receipt: the network's id when sent, the refusal thrown when failed, outbox:<id> while queued", async () => {
    const net = scriptedNetwork();
    const outbox = new Outbox<string>({ dir: temp("outbox"), deliver: net.deliver, log: () => {} });
    outbox.start();
    const refused = { message: "refused", recipient: "ann" };
    const sent = outbox.receipt(outbox.enqueue("ann", "a", "id-a"), 5_000, refused);
    (await net.call(1)).resolve(["net-1"]);
    assert.equal((await sent).message_id, "net-1");
    const own = outbox.receipt(outbox.enqueue("ann", "b", "id-b"), 5_000, refused, (r) => `own-${r.id}`);
    (await net.call(2)).resolve(["net-2"]);
    assert.equal((await own).message_id, "own-id-b");
    const failed = outbox.receipt(outbox.enqueue("ann", "c", "id-c"), 5_000, refused);
    (await net.call(3)).reject(new PermanentDeliveryError("chat not found"));
    await assert.rejects(
      failed,
      (error: unknown) =>
        error instanceof ChannelRecipientError &&
        error.message === "refused: chat not found" &&
        JSON.stringify(error.data).includes('"reason":"chat not found"'),
    );
    const queued = await outbox.receipt(outbox.enqueue("ann", "d", "id-d"), 0, refused);
    assert.equal(queued.message_id, "outbox:id-d");
    assert.ok(Number.isInteger(queued.sent_at_unix));
    (await net.call(4)).resolve(["net-4"]);
    await outbox.stop();
  });

  test("a retryable failure waits the network's retry_after; a permanent one fails at once", async () => {
    const net = scriptedNetwork();
    const dir = temp("outbox");
    const outbox = new Outbox<string>({ dir, deliver: net.deliver, log: () => {}, baseBackoffMs: 10 });
    outbox.start();
    outbox.enqueue("ann", "hello", "id-1");
    (await net.call(1)).reject(new RetryableDeliveryError("429", 300));
    const started = Date.now();
    const second = await net.call(2);
    assert.ok(Date.now() - started >= 250, "retry_after is honoured over the shorter backoff");
    assert.equal(second.record.attempts, 2);
    assert.equal(second.record.last_error, "429");
    second.reject(new PermanentDeliveryError("chat not found"));
    const failed = await outbox.settled("id-1", 5_000);
    assert.equal(failed?.status, "failed");
    assert.equal(failed?.last_error, "chat not found");
    const log = readFileSync(join(dir, "delivery.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      log.map((l) => [l.id, l.status, l.attempts, l.last_error]),
      [["id-1", "failed", 2, "chat not found"]],
    );
    assert.deepEqual(readdirSync(join(dir, "pending")), []);
    await outbox.stop();
  });

  test("a message reported undeliverable after it was sent is marked failed, in memory and in the log", async () => {
    const net = scriptedNetwork();
    const dir = temp("outbox");
    const outbox = new Outbox<string>({ dir, deliver: net.deliver, log: () => {} });
    outbox.start();
    outbox.enqueue("ann", "a1", "id-a1");
    (await net.call(1)).resolve(["m1"]);
    assert.equal((await outbox.settled("id-a1", 5_000))?.status, "sent");
    outbox.markFailed("id-a1", "ann", "bounced: 550 no such user");
    assert.equal(outbox.status("id-a1")?.status, "failed");
    const lines = readFileSync(join(dir, "delivery.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l) => [l.id, l.status, l.bounced_after_sent ?? false]),
      [
        ["id-a1", "sent", false],
        ["id-a1", "failed", true],
      ],
    );
    assert.equal(lines[1].last_error, "bounced: 550 no such user");
    await outbox.stop();
  });

  test("gives up after maxAttempts, saying so", async () => {
    const outbox = new Outbox<string>({
      dir: temp("outbox"),
      deliver: () => Promise.reject(new Error("connection refused")),
      maxAttempts: 3,
      baseBackoffMs: 1,
      log: () => {},
    });
    outbox.start();
    outbox.enqueue("ann", "x", "id-x");
    const settled = await outbox.settled("id-x", 10_000);
    assert.equal(settled?.status, "failed");
    assert.equal(settled?.last_error, "connection refused (gave up after 3 attempts)");
    await outbox.stop();
  });

  test("what was queued is read back by the next run and sent then; an unreadable file is set aside", async () => {
    const dir = temp("outbox");
    const first = new Outbox<string>({
      dir,
      deliver: () => Promise.reject(new Error("down")),
      log: () => {},
    });
    first.enqueue("ann", "kept", "id-kept");
    first.enqueue("bob", "also kept", "id-also");
    await first.stop();
    writeFileSync(join(dir, "pending", "99.json"), "{half a rec");
    const lines: string[] = [];
    const net = scriptedNetwork();
    const second = new Outbox<string>({ dir, deliver: net.deliver, log: (line) => lines.push(line) });
    assert.deepEqual(
      second.queued().map((r) => r.item),
      ["kept", "also kept"],
    );
    assert.ok(readdirSync(join(dir, "pending")).includes("99.json.unreadable"));
    assert.match(lines.join("\n"), /99\.json is unreadable/);
    second.start();
    (await net.call(1)).resolve(["m"]);
    (await net.call(2)).resolve(["n"]);
    assert.equal((await second.settled("id-also", 5_000))?.status, "sent");
    await second.stop();
    // A new message after the restart gets a fresh sequence number, not one of the old files'.
    assert.ok(second.enqueue("ann", "new", "id-new").seq > 2);
  });
});

describe("RateLimiter", () => {
  test("burst, then one token per interval, per key", () => {
    let now = 0;
    const limiter = new RateLimiter({ perMinute: 60, burst: 2, now: () => now });
    assert.equal(limiter.take("a"), 0);
    assert.equal(limiter.take("a"), 0);
    assert.equal(limiter.take("a"), 1000);
    assert.equal(limiter.take("b"), 0, "another contact has its own bucket");
    now = 1000;
    assert.equal(limiter.take("a"), 0);
    assert.equal(limiter.waitMs("a"), 1000);
  });

  test("idle keys beyond maxKeys are forgotten", () => {
    const limiter = new RateLimiter({ perMinute: 1, burst: 1, maxKeys: 2, now: () => 0 });
    limiter.take("a");
    limiter.take("b");
    limiter.take("c");
    assert.equal(limiter.take("a"), 0, "a's bucket was evicted, so it starts full again");
    assert.ok(limiter.take("c") > 0);
  });
});

describe("allowlists", () => {
  test("ids and handles, without case or @; * is everyone; empty is nobody", () => {
    const list = Allowlist.parse("@Alice, 42 bob");
    assert.ok(list.allows(7, "alice"));
    assert.ok(list.allows("42"));
    assert.ok(list.allows(undefined, "@BOB"));
    assert.equal(list.allows(7, "mallory"), false);
    assert.equal(Allowlist.parse("").allows(1, "x"), false);
    assert.ok(Allowlist.parse("*").allows(1));
  });

  test("outbound: known contacts survive a restart; a list; everyone", () => {
    const file = join(temp("known"), "known.json");
    new KnownContacts(file).add("111");
    const known = OutboundPolicy.parse("known", new KnownContacts(file));
    assert.equal(known.refusal("111"), undefined);
    assert.match(known.refusal("222") ?? "", /never written/);
    const listed = OutboundPolicy.parse("222, 333", new KnownContacts(undefined));
    assert.equal(listed.refusal("333"), undefined);
    assert.match(listed.refusal("111") ?? "", /not in the outbound allowlist/);
    assert.equal(OutboundPolicy.parse("*", new KnownContacts(undefined)).refusal("9"), undefined);
  });
});

describe("media", () => {
  test("MEDIA: lines become attachments; other lines stay", () => {
    const split = splitReplyMedia(
      "Here you go.\nMEDIA: https://example.org/a/cat.png\nMEDIA: /srv/files/report.pdf\nsay MEDIA: x here",
    );
    assert.equal(split.text, "Here you go.\nsay MEDIA: x here");
    assert.deepEqual(split.attachments, [
      { kind: "image", url: "https://example.org/a/cat.png", mime_type: "image/png", file_name: "cat.png" },
      {
        kind: "document",
        path: "/srv/files/report.pdf",
        mime_type: "application/pdf",
        file_name: "report.pdf",
      },
    ]);
    assert.deepEqual(
      splitReplyMedia("MEDIA: relative/path.png").attachments,
      [],
      "a relative path is not a reference",
    );
  });

  test("only files under the media roots, symbolic links resolved", () => {
    const root = temp("media");
    mkdirSync(join(root, "out"));
    writeFileSync(join(root, "out", "ok.txt"), "ok");
    writeFileSync(join(root, "secret.txt"), "no");
    symlinkSync(join(root, "secret.txt"), join(root, "out", "link.txt"));
    const roots = new MediaRoots([join(root, "out")]);
    assert.ok(roots.check(join(root, "out", "ok.txt")).endsWith("ok.txt"));
    assert.throws(() => roots.check(join(root, "out", "link.txt")), MediaPathRefusedError);
    assert.throws(() => roots.check(join(root, "out", "..", "secret.txt")), /outside the media directories/);
    assert.throws(() => roots.check(join(root, "out", "missing.txt")), /cannot be read \(ENOENT\)/);
    assert.throws(() => new MediaRoots([]).check(join(root, "out", "ok.txt")), /no media directory/);
  });
});

describe("sendable attachments", () => {
  const refuse = (path: string) => {
    if (path.startsWith("/etc/")) throw new Error(`${path} is outside the media directories`);
  };
  const file = (path: string) => ({ kind: "document" as const, path });
  const remote = { kind: "image" as const, url: "https://example.com/a.png" };

  test("refused files are left out and reported; allowed and remote ones stay", () => {
    const left: string[] = [];
    const kept = sendableAttachments([file("/media/a.pdf"), file("/etc/passwd"), remote], "", refuse, {
      feature: "local files outside X_MEDIA_DIRS",
      leftOut: (reason) => left.push(reason),
    });
    assert.deepEqual(kept, [file("/media/a.pdf"), remote]);
    assert.deepEqual(left, ["/etc/passwd is outside the media directories"]);
  });

  test("a refused file that is all the message carries refuses the send", () => {
    const options = {
      feature: "local files outside X_MEDIA_DIRS",
      leftOut: () => assert.fail("not left out"),
    };
    assert.throws(
      () => sendableAttachments([file("/etc/passwd")], "", refuse, options),
      (error: Error) => error instanceof ChannelUnsupportedError && /outside the media/.test(error.message),
    );
    // Two refused files and no text: the first is left out, the last one alone refuses the send.
    const left: string[] = [];
    assert.throws(
      () =>
        sendableAttachments([file("/etc/a"), file("/etc/b")], "", refuse, {
          feature: "f",
          leftOut: (reason) => left.push(reason),
        }),
      ChannelUnsupportedError,
    );
    assert.equal(left.length, 1);
    assert.deepEqual(
      sendableAttachments([file("/etc/passwd")], "hi", refuse, { feature: "f", leftOut: () => {} }),
      [],
    );
  });
});

describe("long text", () => {
  test("split at a line break, else a space, else hard; no piece over the limit; nothing lost", () => {
    assert.deepEqual(splitText("short", 10), ["short"]);
    assert.deepEqual(splitText("", 10), []);
    assert.deepEqual(splitText("aaaa bbbb\ncccc dddd", 12), ["aaaa bbbb", "cccc dddd"]);
    assert.deepEqual(splitText("aaaa bbbb cccc", 10), ["aaaa bbbb", "cccc"]);
    assert.deepEqual(splitText("x".repeat(25), 10), ["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
    const emoji = `${"y".repeat(9)}\u{1F600}z`;
    assert.deepEqual(splitText(emoji, 10), ["y".repeat(9), "\u{1F600}z"], "a surrogate pair is not cut");
    const long = Array.from({ length: 700 }, (_, i) => `word${i}`).join(" ");
    const pieces = splitText(long, 2000);
    assert.ok(pieces.every((p) => p.length <= 2000));
    assert.equal(pieces.join(" "), long);
  });
});

describe("redaction", () => {
  test("a secret and the patterns are replaced in everything written to stderr", () => {
    const redactor = new Redactor([/\bsk-[a-z0-9]{8,}\b/g]);
    redactor.add("hunter22-password");
    redactor.add("abc");
    assert.equal(
      redactor.redact("pw hunter22-password key sk-abcdef123 abc"),
      "pw [REDACTED] key [REDACTED] abc",
    );

    const script = `
      import { Redactor, redactStderr } from "@nexo/channels-common";
      const r = new Redactor([/\\b\\d{5,}:[A-Za-z0-9_-]{30,}\\b/g]);
      r.add("the-webhook-secret");
      redactStderr(r);
      process.stderr.write("token 123456:AAH-abcdefghijklmnopqrstuvwxyz0123 in a line\\n");
      console.error(new Error("failed with the-webhook-secret in it"));
    `;
    // The built package (npm run build), so the child starts without a TypeScript loader.
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      cwd: join(import.meta.dirname, ".."),
    });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stderr, /token \[REDACTED\] in a line/);
    assert.match(child.stderr, /failed with \[REDACTED\] in it/);
    assert.equal(/AAH-abc|the-webhook-secret/.test(child.stderr), false, child.stderr);
  });
});
