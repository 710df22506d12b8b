/**
 * The admin domains' tests: a real daemon started from a real config directory (./daemon-dir.ts)
 * and two fixture microapps served by the admin frame over that daemon's services — `ops`, granted
 * the capabilities a test names (and audit_read), and `viewer`, granted only audit_read, so every
 * method can be called both granted and denied.
 */
import assert from "node:assert/strict";
import type { AdminServices } from "../../src/admin/index.js";
import { type AdminRig, adminRig, type Frame } from "../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../fixtures/microapps/harness.js";
import { type DaemonDir, startFromDir } from "./daemon-dir.js";

export interface DaemonAdmin {
  env: DaemonDir;
  rig: AdminRig;
  /** `ops` (granted) sends one admin request; resolves with the daemon's whole answer. */
  ops(method: string, params?: unknown): Promise<Frame>;
  /** `viewer` (not granted) sends one admin request. */
  viewer(method: string, params?: unknown): Promise<Frame>;
  stop(): Promise<void>;
}

/** How long a probe waits for one admin answer (a reload or a plugin restart under load). */
const DAEMON_CALL_TIMEOUT_MS = 60_000;

export async function daemonAdmin(
  files: Record<string, string>,
  grants: readonly string[],
  options: { services?: (env: DaemonDir) => Partial<AdminServices>; env?: NodeJS.ProcessEnv } = {},
): Promise<DaemonAdmin> {
  const env = await startFromDir(files, { ...(options.env ? { env: options.env } : {}) });
  let rig: AdminRig;
  try {
    const config = { daemon_timeout_ms: DAEMON_CALL_TIMEOUT_MS };
    rig = await adminRig(
      [
        { id: "ops", fixture: "probe", grants: ["audit_read", ...grants], config },
        { id: "viewer", fixture: "probe", grants: ["audit_read"], config },
      ],
      {
        services: () => ({
          daemon: env.daemon.services,
          secrets: { stateDir: env.stateDir, env: {} },
          ...options.services?.(env),
        }),
      },
    );
  } catch (error) {
    await env.daemon.stop("test over");
    throw error;
  }
  return {
    env,
    rig,
    ops: (method, params) => rig.call("ops", method, params),
    viewer: (method, params) => rig.call("viewer", method, params),
    async stop() {
      await rig.stop();
      await env.daemon.stop("test over");
      await cleanupMicroapps();
    },
  };
}

/** The answer is the gate's refusal of `method` for want of `capability`, audited as denied. */
export function assertDenied(admin: DaemonAdmin, reply: Frame, method: string, capability: string): void {
  assert.equal(reply.error?.code, -32004, JSON.stringify(reply));
  assert.deepEqual(reply.error?.data, { capability, microapp_id: "viewer", method });
  const row = admin.rig.store.audit.tail({ microappId: "viewer", limit: 1 }).entries[0];
  assert.equal(row?.method, method);
  assert.equal(row?.result, "denied");
}

/** The answer's result, failing with the whole frame when it is an error. */
export function resultOf<T = Record<string, unknown>>(reply: Frame): T {
  assert.equal(reply.error, undefined, JSON.stringify(reply.error));
  assert.notEqual(reply.timeout, true, "the daemon did not answer in time");
  return reply.result as T;
}

/** The answer is an error with this code; returns it. */
export function errorOf(reply: Frame, code: number): NonNullable<Frame["error"]> {
  assert.equal(reply.error?.code, code, JSON.stringify(reply));
  return reply.error as NonNullable<Frame["error"]>;
}
