/**
 * Where the hub advertises itself: `~/.craft/hub/hub.lock`, the place DotCraft Desktop's local
 * mode reads (so a Desktop pointed at the `nexo` binary finds nexo's hub there).
 */
import { homedir } from "node:os";
import { join } from "node:path";

export const HUB_LOCK_FILE = "hub.lock";

export function hubDir(): string {
  return join(homedir(), ".craft", "hub");
}

export function hubLockPath(): string {
  return join(hubDir(), HUB_LOCK_FILE);
}
