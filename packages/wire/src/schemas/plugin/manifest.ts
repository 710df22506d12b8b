/**
 * The raw document shape of `nexo-plugin.toml` (plugin contract §2, §2.1, §2.2) once TOML has been
 * parsed into plain values. Validation stops at what the document alone can prove: field shapes,
 * slugs, semver strings, and cross-field rules (duplicate ids, tool namespace, reserved env keys,
 * sandbox bind paths). What needs the outside world (the entrypoint exists, the running daemon
 * satisfies `min_nexo_version`, the operator allows host networking) is the host's job.
 *
 * Defaults are not filled in: the parsed document is also what a plugin echoes back in its
 * `initialize` reply, so it must stay as written. The defaults are exported as constants instead.
 *
 * `[plugin.extends]` is closed (the contract keeps it deny-unknown so new registries need a
 * coordinated change), and so is `[plugin.sandbox]`, because a misspelt or not-yet-supported key
 * there (e.g. `network_allowlist`) would otherwise look like protection while enforcing nothing.
 * Every other table passes unknown keys through: the full upstream manifest has many sections
 * this contract does not cover.
 *
 * The schemas are built on use and let go (`disposableSchema`, ../lazy.ts): a daemon reads a
 * manifest when it starts or restarts a plugin, the SDK once when its plugin starts, and nothing
 * reads one per message, yet the tree kept for good held ~0.14 MB of the idle quickstart daemon's live heap.
 * Each tree is built by one plain builder function from fresh parts (a stand-in embedded in
 * another schema would be rebuilt by every parse that reaches it, and a kept lazy part would stay
 * built for good); the exported names are stand-ins of those builders. The first parse after a
 * collection builds the tree again: ~3 ms (docs/performance.md, "Ninth pass (c)").
 */
import { z } from "zod";
import { formatIssues } from "../../issues.js";
import { disposableSchema } from "../lazy.js";
import { pluginIdSchema, toolNameInNamespace } from "./common.js";
import { type SandboxPathKind, sandboxPathProblem } from "./sandbox-paths.js";

/** Semantic Versioning 2.0.0, full `MAJOR.MINOR.PATCH[-PRE][+BUILD]` form. */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const NUMBER = String.raw`(?:0|[1-9]\d*)`;
const WILDCARD = "[*xX]";
const IDENTIFIERS = String.raw`[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*`;
const PARTIAL_VERSION = String.raw`(?:${WILDCARD}|${NUMBER}(?:\.${WILDCARD}|\.${NUMBER}(?:\.${WILDCARD}|\.${NUMBER}(?:-${IDENTIFIERS})?(?:\+${IDENTIFIERS})?)?)?)`;
const COMPARATOR = String.raw`\s*(?:(?:>=|<=|[=><~^])\s*)?${PARTIAL_VERSION}\s*`;

/**
 * A Cargo-style version requirement, the syntax the reference host parses `min_nexo_version`
 * with: comma-separated comparators such as `>=0.1.0`, `^0.2`, `~1.4.2`, `0.3.*`.
 */
export const VERSION_REQUIREMENT_PATTERN = new RegExp(`^${COMPARATOR}(?:,${COMPARATOR})*$`);

/** Env keys with this prefix are reserved for the daemon's own configuration (§2). */
export const RESERVED_ENV_PREFIX = "NEXO_";

/** The five `[plugin.extends]` lists, in the order the reference validator walks them. */
export const EXTENDS_SECTIONS = ["channels", "llm_providers", "memory_backends", "hooks", "tools"] as const;
export type ExtendsSection = (typeof EXTENDS_SECTIONS)[number];

export const SANDBOX_DEFAULTS = {
  enabled: false,
  network: "deny",
  fs_read_paths: [] as readonly string[],
  fs_write_paths: [] as readonly string[],
  drop_user: true,
} as const;

export const SUPERVISOR_DEFAULTS = {
  respawn: false,
  max_attempts: 3,
  backoff_ms: 1_000,
  stderr_tail_lines: 32,
} as const;
/** Bounds the per-plugin stderr ring buffer, so a manifest cannot request unbounded memory. */
export const SUPERVISOR_STDERR_TAIL_MAX = 512;
/** Below this the respawn backoff degenerates into a tight crash loop. */
export const SUPERVISOR_BACKOFF_MS_MIN = 100;
export const SUPERVISOR_BACKOFF_MS_MAX = 300_000;

function nonBlankStringSchema() {
  return z.string().refine((value) => value.trim() !== "", { error: "must not be blank" });
}

// --- [plugin.requires] --------------------------------------------------------------------------

function manifestRequiresSchema() {
  return z.looseObject({
    nexo_capabilities: z.array(z.string()).optional(),
  });
}
export const ManifestRequiresSchema = disposableSchema(manifestRequiresSchema);
export type ManifestRequires = z.infer<typeof ManifestRequiresSchema>;

// --- [plugin.entrypoint] ------------------------------------------------------------------------

// Closed (issue 14.4): a typo such as `arg` for `args` would otherwise start the plugin without
// its arguments and say nothing; the config loader turns the unknown key into a did-you-mean.
function manifestEntrypointSchema() {
  return z
    .strictObject({
      /** An absolute path or a binary on PATH. */
      command: nonBlankStringSchema(),
      args: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
    })
    .superRefine((entrypoint, ctx) => {
      for (const [key, value] of Object.entries(entrypoint.env ?? {})) {
        const path = ["env", key];
        if (key.startsWith(RESERVED_ENV_PREFIX)) {
          ctx.addIssue({
            code: "custom",
            path,
            message: `env key "${key}" is reserved: keys beginning with ${RESERVED_ENV_PREFIX} belong to the daemon`,
          });
        } else if (key === "" || key.includes("=") || key.includes("\0")) {
          ctx.addIssue({
            code: "custom",
            path,
            message: `"${key}" is not a usable environment variable name`,
          });
        }
        if (value.includes("\0")) {
          ctx.addIssue({ code: "custom", path, message: "environment values cannot contain NUL" });
        }
      }
    });
}
export const ManifestEntrypointSchema = disposableSchema(manifestEntrypointSchema);
export type ManifestEntrypoint = z.infer<typeof ManifestEntrypointSchema>;

// --- [[plugin.channels.register]] ---------------------------------------------------------------

function manifestChannelRegistrationSchema() {
  return z.looseObject({
    /** Drives the `plugin.outbound.<kind>` / `plugin.inbound.<kind>` topic allowlist (§6). */
    kind: pluginIdSchema(),
    /** Implementation type name; informational. */
    adapter: z.string().min(1),
  });
}
export const ManifestChannelRegistrationSchema = disposableSchema(manifestChannelRegistrationSchema);
export type ManifestChannelRegistration = z.infer<typeof ManifestChannelRegistrationSchema>;

function manifestChannelsSchema() {
  return z
    .looseObject({
      register: z.array(manifestChannelRegistrationSchema()).optional(),
    })
    .superRefine((channels, ctx) => {
      const seen = new Set<string>();
      channels.register?.forEach((registration, index) => {
        if (seen.has(registration.kind)) {
          ctx.addIssue({
            code: "custom",
            path: ["register", index, "kind"],
            message: `channel kind "${registration.kind}" is registered more than once`,
          });
        }
        seen.add(registration.kind);
      });
    });
}
export const ManifestChannelsSchema = disposableSchema(manifestChannelsSchema);
export type ManifestChannels = z.infer<typeof ManifestChannelsSchema>;

// --- [plugin.extends] ---------------------------------------------------------------------------

function manifestExtendsSchema() {
  const idList = z.array(pluginIdSchema()).optional();
  return z
    .strictObject(
      {
        channels: idList,
        llm_providers: idList,
        memory_backends: idList,
        hooks: idList,
        tools: idList,
      },
      {
        error: (issue) =>
          issue.code === "unrecognized_keys"
            ? `unknown key; [plugin.extends] only accepts ${EXTENDS_SECTIONS.join(", ")}`
            : undefined,
      },
    )
    .superRefine((extendsSection, ctx) => {
      const claimedBy = new Map<string, ExtendsSection>();
      for (const section of EXTENDS_SECTIONS) {
        const seenHere = new Set<string>();
        extendsSection[section]?.forEach((id, index) => {
          const path = [section, index];
          if (seenHere.has(id)) {
            ctx.addIssue({ code: "custom", path, message: `"${id}" is listed twice in ${section}` });
            return;
          }
          seenHere.add(id);
          const owner = claimedBy.get(id);
          if (owner === undefined) {
            claimedBy.set(id, section);
          } else {
            ctx.addIssue({
              code: "custom",
              path,
              message: `"${id}" is already declared in ${owner}; an id may occupy only one [plugin.extends] list`,
            });
          }
        });
      }
    });
}
export const ManifestExtendsSchema = disposableSchema(manifestExtendsSchema);
export type ManifestExtends = z.infer<typeof ManifestExtendsSchema>;

// --- [plugin.sandbox] ---------------------------------------------------------------------------

function sandboxNetworkSchema() {
  return z.enum(["deny", "host"]);
}
export const SandboxNetworkSchema = disposableSchema(sandboxNetworkSchema);
export type SandboxNetwork = z.infer<typeof SandboxNetworkSchema>;

const SANDBOX_KEYS = ["enabled", "network", "fs_read_paths", "fs_write_paths", "drop_user"];

export function manifestSandboxSchema() {
  return z
    .strictObject(
      {
        enabled: z.boolean().optional(),
        network: sandboxNetworkSchema().optional(),
        fs_read_paths: z.array(z.string()).optional(),
        fs_write_paths: z.array(z.string()).optional(),
        drop_user: z.boolean().optional(),
      },
      {
        error: (issue) =>
          issue.code === "unrecognized_keys"
            ? `unknown key; [plugin.sandbox] only accepts ${SANDBOX_KEYS.join(", ")}`
            : undefined,
      },
    )
    .superRefine((sandbox, ctx) => {
      // A disabled section binds nothing, so its paths are inert; the reference validator skips it too.
      if (sandbox.enabled !== true) return;
      const lists: Array<[string, SandboxPathKind, string[] | undefined]> = [
        ["fs_read_paths", "read", sandbox.fs_read_paths],
        ["fs_write_paths", "write", sandbox.fs_write_paths],
      ];
      for (const [key, kind, paths] of lists) {
        paths?.forEach((path, index) => {
          const problem = sandboxPathProblem(path, kind);
          if (problem !== undefined) ctx.addIssue({ code: "custom", path: [key, index], message: problem });
        });
      }
    });
}
export const ManifestSandboxSchema = disposableSchema(manifestSandboxSchema);
export type ManifestSandbox = z.infer<typeof ManifestSandboxSchema>;

// --- [plugin.supervisor] ------------------------------------------------------------------------

// Closed for the same reason: `respwan = true` silently meant "never restart".
function manifestSupervisorSchema() {
  return z
    .strictObject({
      respawn: z.boolean().optional(),
      max_attempts: z.number().int().nonnegative().optional(),
      backoff_ms: z.number().int().nonnegative().optional(),
      stderr_tail_lines: z.number().int().nonnegative().max(SUPERVISOR_STDERR_TAIL_MAX).optional(),
    })
    .superRefine((supervisor, ctx) => {
      // The respawn knobs are inert while respawn is off, so only then are their bounds enforced.
      if (supervisor.respawn !== true) return;
      const maxAttempts = supervisor.max_attempts ?? SUPERVISOR_DEFAULTS.max_attempts;
      if (maxAttempts < 1) {
        ctx.addIssue({
          code: "custom",
          path: ["max_attempts"],
          message: "must be at least 1 when respawn = true",
        });
      }
      const backoff = supervisor.backoff_ms ?? SUPERVISOR_DEFAULTS.backoff_ms;
      if (backoff < SUPERVISOR_BACKOFF_MS_MIN || backoff > SUPERVISOR_BACKOFF_MS_MAX) {
        ctx.addIssue({
          code: "custom",
          path: ["backoff_ms"],
          message: `must be between ${SUPERVISOR_BACKOFF_MS_MIN} and ${SUPERVISOR_BACKOFF_MS_MAX} when respawn = true`,
        });
      }
    });
}
export const ManifestSupervisorSchema = disposableSchema(manifestSupervisorSchema);
export type ManifestSupervisor = z.infer<typeof ManifestSupervisorSchema>;

// --- [plugin] and the document ------------------------------------------------------------------

function manifestPluginSchema() {
  const nonBlank = nonBlankStringSchema();
  return z
    .looseObject({
      id: pluginIdSchema(),
      version: z.string().regex(SEMVER_PATTERN, { error: "must be a semantic version such as 0.2.0" }),
      name: nonBlank,
      description: nonBlank,
      min_nexo_version: z.string().regex(VERSION_REQUIREMENT_PATTERN, {
        error: 'must be a version requirement such as ">=0.1.0"',
      }),
      requires: manifestRequiresSchema().optional(),
      entrypoint: manifestEntrypointSchema().optional(),
      channels: manifestChannelsSchema().optional(),
      extends: manifestExtendsSchema().optional(),
      sandbox: manifestSandboxSchema().optional(),
      supervisor: manifestSupervisorSchema().optional(),
    })
    .superRefine((plugin, ctx) => {
      plugin.extends?.tools?.forEach((toolName, index) => {
        if (!toolNameInNamespace(plugin.id, toolName)) {
          ctx.addIssue({
            code: "custom",
            path: ["extends", "tools", index],
            message: `tool "${toolName}" must be named ${plugin.id}_* or ext_${plugin.id}_*`,
          });
        }
      });
    });
}
export const ManifestPluginSchema = disposableSchema(manifestPluginSchema);
export type ManifestPlugin = z.infer<typeof ManifestPluginSchema>;

function pluginManifestSchema() {
  return z.looseObject({
    plugin: manifestPluginSchema(),
  });
}
export const PluginManifestSchema = disposableSchema(pluginManifestSchema);
export type PluginManifest = z.infer<typeof PluginManifestSchema>;

/**
 * One line per problem, each led by its TOML key path (`plugin.extends.tools[0]: …`), for
 * operator-facing errors. Unknown keys of a closed table are reported under their own path.
 */
export function describeManifestIssues(error: z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => formatIssues([{ path: [...issue.path, key], message: issue.message }]));
    }
    return [formatIssues([issue], "(document)")];
  });
}
