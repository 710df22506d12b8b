/**
 * The admin client is derived from the method table: one function per `nexo/admin/*` method,
 * nested by the segments of its name, params and results typed from the schemas (the
 * `@ts-expect-error` lines fail `npm run typecheck` if the types stop holding callers to them).
 * Served here by a JsonRpcPeer over in-memory streams; the process-level behaviour is in
 * app.test.ts.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { CapabilityNotGrantedError, JsonRpcPeer } from "@nexo/wire";
import { admin } from "@nexo/wire/schemas";
import type { AdminCallResult } from "nexo-plugin-sdk/microapp";
import { createOutboundCalls } from "../../src/microapp/admin-client.js";

function connected() {
  const toDaemon = new PassThrough();
  const toApp = new PassThrough();
  const daemon = JsonRpcPeer.overStreams({ input: toDaemon, output: toApp, name: "daemon" });
  const app = JsonRpcPeer.overStreams({
    input: toApp,
    output: toDaemon,
    name: "app",
    ids: { prefix: "app:" },
    errorProtocol: "admin",
  });
  const seen: Array<{ method: string; params: unknown }> = [];
  daemon.setFallbackRequestHandler((method, params) => {
    seen.push({ method, params });
    if (method === "nexo/admin/secrets/write") {
      throw new CapabilityNotGrantedError("secrets_write", method, "probe");
    }
    return { echoed: method };
  });
  return { ...createOutboundCalls(app), seen };
}

function leaves(node: unknown, path: string[] = []): string[] {
  if (typeof node === "function") return [path.join("/")];
  return Object.entries(node as Record<string, unknown>).flatMap(([key, child]) =>
    leaves(child, [...path, key]),
  );
}

describe("the admin client", () => {
  test("has one function per method of adminMethods, at the path of its name, and nothing else", () => {
    const { admin: client } = connected();
    const { call, setOperatorTokenHash, ...tree } = client as unknown as Record<string, unknown>;
    assert.equal(typeof call, "function");
    assert.equal(typeof setOperatorTokenHash, "function");
    const expected = admin.ADMIN_METHOD_NAMES.map((m) => m.slice("nexo/admin/".length)).sort();
    assert.deepEqual(leaves(tree).sort(), expected);
    // The spec's 52 rows and nexo's documented additions (microapps/list, microapps/restart).
    assert.equal(expected.length, 52 + admin.NEXO_ADMIN_ADDITIONS.length);
    assert.equal(typeof client.microapps.list, "function");
    assert.equal(typeof client.whatsapp.bot.send, "function");
    assert.equal(typeof client.reload, "function");
  });

  test("each function sends its own method with the params as given", async () => {
    const { admin: client, seen } = connected();
    const fns: Array<[string, (params?: unknown) => Promise<unknown>]> = admin.ADMIN_METHOD_NAMES.map((m) => {
      const path = m.slice("nexo/admin/".length).split("/");
      const fn = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], client);
      return [m, fn as (params?: unknown) => Promise<unknown>];
    });
    // The replies break most result schemas: what matters here is what went out.
    await Promise.allSettled(
      fns.map(([, fn]) => fn({ probe: true, operator_token_hash: "0123456789abcdef" })),
    );
    assert.deepEqual(seen.map((s) => s.method).sort(), [...admin.ADMIN_METHOD_NAMES].sort());
    assert.ok(seen.every((s) => (s.params as { probe?: boolean }).probe === true));
  });

  test("a denial rejects with CapabilityNotGrantedError; a reply breaking the schema with MalformedReplyError", async () => {
    const { admin: client } = connected();
    await assert.rejects(client.secrets.write({ name: "API_KEY", value: "x" }), (error: unknown) => {
      assert.ok(error instanceof CapabilityNotGrantedError);
      assert.equal(error.capability, "secrets_write");
      assert.equal(error.method, "nexo/admin/secrets/write");
      assert.equal(error.microappId, "probe");
      return true;
    });
    await assert.rejects(client.agents.list(), /malformed nexo\/admin\/agents\/list reply: agents: /);
  });

  test("the types follow the schemas", async () => {
    const { admin: client } = connected();
    const typed = async () => {
      // Optional params may be left out; required ones may not.
      await client.agents.list();
      await client.reload();
      // @ts-expect-error agents/get needs {agent_id}
      await client.agents.get();
      // @ts-expect-error agent_id is a string
      await client.agents.get({ agent_id: 7 });
      // Stamped methods take operator_token_hash from the stamping source, so it may be left out.
      await client.escalations.resolve({ scope: {} as never, by: "dismissed", dismiss_reason: "spam" });
      const listed: AdminCallResult<"agents/list"> = await client.call("agents/list", { active_only: true });
      const ids: string[] = listed.agents.map((agent) => agent.id);
      // @ts-expect-error unknown methods do not type-check
      await client.call("agents/explode");
      return ids;
    };
    assert.equal(typeof typed, "function");
  });
});
