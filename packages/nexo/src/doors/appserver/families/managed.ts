/**
 * What every management family needs from the host: the services facade, whether it is there
 * (the family's `available`), and the `workspace/configChanged` broadcast after a change.
 */
import type { WorkspaceConfigRegion } from "@nexo/wire/schemas/appserver";
import type { DaemonServices } from "../../../daemon/services/index.js";
import { isoTime } from "../../../iso-time.js";
import type { Call } from "../family.js";
import type { AppServerHost } from "../host.js";

/** The facade, for a family listed only when it is there (its capability gates its methods). */
export function servicesOf(call: Call): DaemonServices {
  const management = call.host.management;
  if (management === undefined) throw new Error("a management family was served without services");
  return management.services;
}

/** Whether `host` can manage its config files (the facade is there). */
export function managesConfig(host: AppServerHost): boolean {
  return host.management !== undefined;
}

/** Whether `host` runs the parts it manages (their status is live). */
export function managesLive(host: AppServerHost): boolean {
  return host.management?.live === true;
}

/** Tells every connection (that wants it) that the workspace configuration changed. */
export function announceConfigChange(
  host: AppServerHost,
  source: string,
  regions: WorkspaceConfigRegion[],
): void {
  host.broadcast("workspace/configChanged", { source, regions, changedAt: isoTime() });
}
