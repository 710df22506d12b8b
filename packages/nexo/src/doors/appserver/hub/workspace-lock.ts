/**
 * One WebSocket AppServer per workspace: `<workspace>/.nexo/appserver.lock`, taken by every
 * `nexo app-server` that listens on a WebSocket (a stdio-only server is private to the process
 * that started it, and nexo's store is safe for several processes, so it takes none). The record
 * names the owner (pid, host, start time — see daemon/lock.ts for how a dead owner's lock is taken
 * over safely), the workspace, whether a hub started it, and its WebSocket address without the
 * token. The hub reads it to refuse starting a second server beside a live one.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { acquireLockFile, inspectLockFile, type StateLock } from "../../../daemon/lock.js";

export const WORKSPACE_LOCK_DIR = ".nexo";
export const WORKSPACE_LOCK_FILE = "appserver.lock";

export function workspaceLockPath(workspace: string): string {
  return join(workspace, WORKSPACE_LOCK_DIR, WORKSPACE_LOCK_FILE);
}

export interface WorkspaceLockInfo {
  /** ws://HOST:PORT/ws, without the token. */
  url: string;
  managedByHub: boolean;
  version: string;
}

/** Takes the workspace's lock, or throws StateLockError (`locked` naming the live owner). */
export function takeWorkspaceLock(workspace: string, info: WorkspaceLockInfo): Promise<StateLock> {
  mkdirSync(join(workspace, WORKSPACE_LOCK_DIR), { recursive: true, mode: 0o700 });
  return acquireLockFile(workspaceLockPath(workspace), {
    extra: {
      workspacePath: workspace,
      managedByHub: info.managedByHub,
      version: info.version,
      endpoints: { appServerWebSocket: info.url },
    },
    holder: "nexo app-server",
    subject: `workspace ${workspace}`,
    remedy: "connect to that server, or stop it first",
  });
}

/** The pid of the live process holding the workspace's lock, if one does. */
export function workspaceLockHolder(workspace: string): number | undefined {
  const seen = inspectLockFile(workspaceLockPath(workspace));
  return seen?.state === "dead" || seen === undefined ? undefined : seen.record.pid;
}
