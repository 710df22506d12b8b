/** `--listen` parsing: the three forms, and the refusals (no token off loopback, wss, bad forms). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ListenError, parseListen } from "../../../src/daemon/config/appserver-listen.js";

const TOKEN = "t0ken-long-enough-1234";

describe("parseListen", () => {
  test("stdio is the default", () => {
    assert.deepEqual(parseListen(undefined, undefined), { stdio: true });
    assert.deepEqual(parseListen("stdio://", undefined), { stdio: true });
  });

  test("ws:// serves only the WebSocket, ws+stdio:// both", () => {
    assert.deepEqual(parseListen("ws://127.0.0.1:9100", undefined), {
      stdio: false,
      websocket: { host: "127.0.0.1", port: 9100 },
    });
    assert.deepEqual(parseListen("ws+stdio://localhost:0", TOKEN), {
      stdio: true,
      websocket: { host: "127.0.0.1", port: 0, token: TOKEN },
    });
    assert.deepEqual(parseListen("ws://[::1]:9100/", undefined), {
      stdio: false,
      websocket: { host: "::1", port: 9100 },
    });
  });

  test("a listener other machines can reach needs a token", () => {
    assert.throws(() => parseListen("ws://0.0.0.0:9100", undefined), /token is required/);
    assert.throws(() => parseListen("ws://192.168.1.5:9100", undefined), ListenError);
    assert.deepEqual(parseListen("ws://0.0.0.0:9100", TOKEN).websocket, {
      host: "0.0.0.0",
      port: 9100,
      token: TOKEN,
    });
  });

  test("weak tokens, wss and malformed addresses are refused with the reason", () => {
    assert.throws(() => parseListen("ws://127.0.0.1:9100", "short"), /at least 16/);
    assert.throws(() => parseListen("wss://127.0.0.1:9100", TOKEN), /TLS-terminating proxy/);
    assert.throws(() => parseListen("ws://127.0.0.1", undefined), /port is required/);
    assert.throws(() => parseListen("ws://127.0.0.1:99999", undefined), /out of range/);
    assert.throws(() => parseListen("http://127.0.0.1:1", undefined), /expected stdio/);
  });
});
