/**
 * The Hub protocol: how a local client (DotCraft Desktop's local mode) finds or starts the
 * AppServer of a workspace. A per-user hub process listens on loopback HTTP and advertises itself
 * in a lock file (`~/.craft/hub/hub.lock`); every call but `GET /v1/status` carries
 * `Authorization: Bearer <token>` with the token from that file. JSON bodies, camelCase.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/** What `hub.lock` holds for clients (beside the owner's identity fields nexo's locks carry). */
export const HubLockInfoSchema = lazySchema("appserver.hub", () =>
  z.looseObject({
    pid: z.number().int().positive(),
    apiBaseUrl: z.string().min(1),
    token: z.string().min(1),
    startedAt: z.string(),
    version: z.string(),
  }),
);
export type HubLockInfo = z.infer<typeof HubLockInfoSchema>;

export const HubStatusSchema = lazySchema("appserver.hub", () =>
  z.looseObject({
    hubVersion: z.string(),
    pid: z.number().int().positive(),
    startedAt: z.string(),
    statePath: z.string(),
    apiBaseUrl: z.string(),
    capabilities: z.looseObject({
      appServerManagement: z.boolean(),
      portManagement: z.boolean(),
      events: z.boolean(),
      notifications: z.boolean(),
      tray: z.boolean(),
    }),
  }),
);
export type HubStatus = z.infer<typeof HubStatusSchema>;

export const HubEnsureRequestSchema = lazySchema("appserver.hub", () =>
  z.looseObject({
    workspacePath: z.string().min(1),
    client: z.looseObject({ name: z.string(), version: z.string().optional() }).optional(),
    /** Default true; false only reports what is there. */
    startIfMissing: z.boolean().optional(),
  }),
);
export type HubEnsureRequest = z.infer<typeof HubEnsureRequestSchema>;

export const HubWorkspaceRequestSchema = lazySchema("appserver.hub", () =>
  z.looseObject({ workspacePath: z.string().min(1) }),
);
export type HubWorkspaceRequest = z.infer<typeof HubWorkspaceRequestSchema>;

export const HubAppServerStateSchema = lazySchema("appserver.hub", () =>
  z.enum(["stopped", "starting", "running", "unhealthy", "exited", "stopping"]),
);
export type HubAppServerState = z.infer<typeof HubAppServerStateSchema>;

export const HubServiceStatusSchema = lazySchema("appserver.hub", () =>
  z.looseObject({
    state: z.string(),
    url: z.string().nullable().optional(),
    reason: z.string().nullable().optional(),
  }),
);

export const HubAppServerSchema = lazySchema("appserver.hub", () =>
  z.looseObject({
    workspacePath: z.string(),
    canonicalWorkspacePath: z.string(),
    state: HubAppServerStateSchema,
    pid: z.number().int().positive().nullable().optional(),
    /** `appServerWebSocket`: `ws://127.0.0.1:<port>/ws?token=<token>`, ready to connect to. */
    endpoints: z.record(z.string(), z.string()),
    serviceStatus: z.record(z.string(), HubServiceStatusSchema),
    serverVersion: z.string().nullable().optional(),
    startedByHub: z.boolean(),
    exitCode: z.number().int().nullable().optional(),
    lastError: z.string().nullable().optional(),
    recentStderr: z.string().nullable().optional(),
  }),
);
export type HubAppServer = z.infer<typeof HubAppServerSchema>;

export const HubErrorCodeSchema = lazySchema("appserver.hub", () =>
  z.enum([
    "unauthorized",
    "invalidRequest",
    "notFound",
    "workspaceNotFound",
    "workspaceLocked",
    "appServerStartFailed",
    "appServerUnhealthy",
    "portUnavailable",
  ]),
);
export type HubErrorCode = z.infer<typeof HubErrorCodeSchema>;

export const HubErrorSchema = lazySchema("appserver.hub", () =>
  z.looseObject({
    error: z.looseObject({ code: HubErrorCodeSchema, message: z.string(), details: z.unknown().optional() }),
  }),
);
export type HubError = z.infer<typeof HubErrorSchema>;
