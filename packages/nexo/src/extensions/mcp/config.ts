/**
 * The body of mcp.yaml: which MCP servers nexo connects to, and how.
 *
 * The file is closed (unknown keys are errors, with a "did you mean" from the config loader): a
 * misspelt `enabeld: false` or `arg:` would otherwise start a server the operator meant to be off,
 * or start it wrong, and the failure would surface far away from its cause.
 *
 * Server names become part of tool names (`mcp__<server>__<tool>`, see naming.ts), which is why
 * they are restricted more than YAML keys would need to be.
 */
import { RESERVED_ENV_PREFIX } from "@nexo/wire/schemas/plugin";
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import { ScalarTextSchema } from "../../config/scalar-text.js";
import { RestartConfigSchema } from "../restart-config.js";

/** Long enough for `npx -y some-server` to download on a cold cache; the reference waits 30 s too. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** A tool call that takes longer than this is abandoned (and cancelled on the server). */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Upper bound for both timeouts: a typo like 300000000 should fail, not hang the daemon for days. */
const MAX_TIMEOUT_MS = 60 * 60 * 1000;

/** 1-32 characters of A-Z a-z 0-9 _ -, without `__` and not ending in `_` (naming.ts says why). */
export const SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;

/** Why `name` cannot name an MCP server, or undefined when it can. */
export function serverNameProblem(name: string): string | undefined {
  if (!SERVER_NAME.test(name)) return "must be 1-32 characters of A-Z a-z 0-9 _ -";
  if (name.includes("__")) return 'must not contain "__" (it separates server and tool in tool names)';
  if (name.endsWith("_")) return 'must not end with "_" (it would run into the "__" separator)';
  return undefined;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A record whose keys must pass `problem`. Keys are checked here rather than with a key schema,
 * because zod reports a bad key only as "Invalid key in record", hiding the reason.
 */
function recordWithKeys<V extends z.ZodType>(value: V, problem: (key: string) => string | undefined) {
  return z.record(z.string(), value).superRefine((record, ctx) => {
    for (const key of Object.keys(record)) {
      const message = problem(key);
      if (message !== undefined) ctx.addIssue({ code: "custom", path: [key], message });
    }
  });
}

/**
 * mcp.yaml's schemas, built fresh on each call. The exported ones below are stand-ins that build
 * on use and let go (disposableSchema): mcp.yaml is parsed at start, on reload and when the admin
 * services or json-stream's add_mcp_server add a server, never per tool call, and an idle daemon
 * need not keep them.
 */
function buildMcpConfigSchemas() {
  const serverName = z.string().superRefine((name, ctx) => {
    const problem = serverNameProblem(name);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: `server name "${name}" ${problem}` });
  });

  const timeout = z.int().min(1).max(MAX_TIMEOUT_MS);

  const env = recordWithKeys(ScalarTextSchema, (key) => {
    if (!ENV_NAME.test(key))
      return `"${key}" is not a variable name (letters, digits and _, not starting with a digit)`;
    // The same rule as for plugins (extensions/env.ts): these name what nexo tells its children.
    if (key.startsWith(RESERVED_ENV_PREFIX))
      return `"${key}" is reserved: variables beginning with ${RESERVED_ENV_PREFIX} belong to the daemon`;
    return undefined;
  });

  const headers = recordWithKeys(
    z
      .string()
      .refine((value) => !/[\r\n]/.test(value), { error: "header values cannot contain line breaks" }),
    (key) => (HEADER_NAME.test(key) ? undefined : `"${key}" is not a valid HTTP header name`),
  );

  /** Fields every transport shares. */
  const commonFields = {
    /** false keeps the entry in the file but does not start the server. */
    enabled: z.boolean().default(true),
    /** Spawn or connect, handshake and first tool listing must finish within this. */
    startup_timeout_ms: timeout.optional(),
    /** Per tool call; overrides the file-wide `call_timeout_ms`. */
    call_timeout_ms: timeout.optional(),
  };

  /** A server nexo starts as a child process and speaks to over stdin/stdout. */
  const stdio = z.strictObject({
    transport: z.literal("stdio"),
    /** A PATH name or a path; looked up with the PATH the server gets. */
    command: z.string().min(1, { error: "command must not be empty" }),
    args: z.array(ScalarTextSchema).default([]),
    /**
     * The server's whole environment besides the base every child gets (PATH, HOME, TMPDIR, the
     * locale): nothing else of the daemon's environment is passed on, so secrets reach a server
     * only when written here (`${GITHUB_TOKEN}`).
     */
    env: env.default({}),
    /** Working directory; a relative path starts at the config directory. */
    cwd: z.string().min(1).optional(),
    /** When a server that crashed is started again; key by key over the file-wide `restart`. */
    restart: RestartConfigSchema.optional(),
    ...commonFields,
  });

  /** A server nexo reaches over MCP's streamable HTTP transport. */
  const http = z
    .strictObject({
      // Both spellings occur in the wild (json-stream's add_mcp_server sends either).
      transport: z.literal(["streamable_http", "streamable-http"]),
      url: z.url({ protocol: /^https?$/, error: "url must be an http(s) URL" }),
      /** Sent with every request, e.g. `Authorization: Bearer ${TOKEN}`. */
      headers: headers.default({}),
      ...commonFields,
    })
    .transform((config) => ({ ...config, transport: "streamable_http" as const }));

  const server = z.discriminatedUnion("transport", [stdio, http], {
    error: (issue) => {
      if (issue.code !== "invalid_union") return undefined;
      const given = (issue.input as { transport?: unknown } | undefined)?.transport;
      if (given === "sse") {
        return 'transport "sse" (the older HTTP+SSE transport) is not supported; use "streamable_http"';
      }
      if (given === undefined) return 'transport is required: "stdio" or "streamable_http"';
      return `transport must be "stdio" or "streamable_http", got ${JSON.stringify(given)}`;
    },
  });

  const config = z.strictObject({
    /** Default for servers that do not set their own. */
    startup_timeout_ms: timeout.default(DEFAULT_STARTUP_TIMEOUT_MS),
    /** Default for servers that do not set their own. */
    call_timeout_ms: timeout.default(DEFAULT_CALL_TIMEOUT_MS),
    /** The restart policy of every stdio server (plugins.yaml's `restart:` keys); a server's own wins. */
    restart: RestartConfigSchema.optional(),
    servers: recordWithKeys(server, (name) => {
      const problem = serverNameProblem(name);
      return problem === undefined ? undefined : `server name "${name}" ${problem}`;
    }).default({}),
  });
  return { serverName, stdio, http, server, config };
}

export const McpServerNameSchema = disposableSchema(() => buildMcpConfigSchemas().serverName);

/** A server nexo starts as a child process and speaks to over stdin/stdout. */
export const McpStdioServerConfigSchema = disposableSchema(() => buildMcpConfigSchemas().stdio);

/** A server nexo reaches over MCP's streamable HTTP transport. */
export const McpHttpServerConfigSchema = disposableSchema(() => buildMcpConfigSchemas().http);

export const McpServerConfigSchema = disposableSchema(() => buildMcpConfigSchemas().server);

export const McpConfigSchema = disposableSchema(() => buildMcpConfigSchemas().config);

export type McpConfig = z.output<typeof McpConfigSchema>;
export type McpConfigInput = z.input<typeof McpConfigSchema>;
export type McpServerConfig = z.output<typeof McpServerConfigSchema>;
export type McpServerConfigInput = z.input<typeof McpServerConfigSchema>;
export type McpStdioServerConfig = z.output<typeof McpStdioServerConfigSchema>;
export type McpHttpServerConfig = z.output<typeof McpHttpServerConfigSchema>;
export type McpTransportKind = McpServerConfig["transport"];

const COMMON_KEYS = ["transport", "enabled", "startup_timeout_ms", "call_timeout_ms"] as const;
const STDIO_KEYS = ["command", "args", "env", "cwd", "restart"] as const;
const HTTP_KEYS = ["url", "headers"] as const;

/**
 * A server config from a looser object that describes a server among other things, such as
 * json-stream's `add_mcp_server` command ({type, name, transport, command, args, env, url,
 * headers}): only the keys the transport uses are kept (a client that sends `url: ""` along with
 * a stdio command is not refused for it). The result is still to be validated (`connect` does).
 */
export function serverConfigFromFields(fields: Readonly<Record<string, unknown>>): McpServerConfigInput {
  const transport = fields.transport;
  const specific =
    transport === "stdio"
      ? STDIO_KEYS
      : transport === "streamable_http" || transport === "streamable-http"
        ? HTTP_KEYS
        : [...STDIO_KEYS, ...HTTP_KEYS];
  const picked: Record<string, unknown> = {};
  for (const key of [...COMMON_KEYS, ...specific]) {
    if (fields[key] !== undefined) picked[key] = fields[key];
  }
  return picked as McpServerConfigInput;
}
