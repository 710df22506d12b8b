/**
 * Assembles an AppServer: the host with every listed method family served on each connection.
 * Listeners (stdio in the CLI, websocket-listener.ts) hand it their transports.
 */
import type { Logger } from "../../log.js";
import { FAMILIES } from "./families/index.js";
import { familyCapabilities, type MethodFamily, serveFamily } from "./family.js";
import { AppServerHost, type AppServerHostOptions } from "./host.js";

export interface AppServerOptions extends Omit<AppServerHostOptions, "serve" | "capabilities" | "logger"> {
  logger: Logger;
  /** Default: every family of families/index.ts. */
  families?: readonly MethodFamily[];
}

export function createAppServer(options: AppServerOptions): AppServerHost {
  const families = options.families ?? FAMILIES;
  const host: AppServerHost = new AppServerHost({
    ...options,
    serve: (connection) => {
      for (const family of families) serveFamily(family, connection, host);
    },
    capabilities: () => familyCapabilities(families, host),
  });
  return host;
}
