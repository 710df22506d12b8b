/**
 * `nexo-plugin.toml`, parsed and validated by the same schema the host applies (plugin contract §2),
 * so a manifest the host would refuse fails when the plugin starts, with the offending key named,
 * instead of as a killed child during the handshake.
 *
 * The document is kept as plain JSON (TOML datetimes become ISO strings), because that is what the
 * plugin echoes in its `initialize` reply.
 */
import { formatIssuePath } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { parse as parseToml, TomlError } from "smol-toml";
import { ManifestError, WireError } from "./errors.js";
import { toStrictJson } from "./wire.js";

/** The four `[plugin]` fields every plugin has. */
export interface ManifestPluginSection {
  id: string;
  version: string;
  name: string;
  description: string;
}

export interface ParsedManifest {
  plugin: ManifestPluginSection;
  /** The whole document as JSON, exactly as written. */
  raw: Record<string, unknown>;
  /** The same document, typed. */
  document: plugin.PluginManifest;
}

/** Parses and validates a manifest. Throws ManifestError naming the first offending key. */
export function parseManifest(toml: string): ParsedManifest {
  if (typeof toml !== "string") throw new ManifestError("the manifest must be a string of TOML");
  let parsed: unknown;
  try {
    parsed = parseToml(toml);
  } catch (error) {
    if (error instanceof TomlError) {
      throw new ManifestError(
        `invalid TOML at line ${error.line}, column ${error.column}: ${firstLine(error)}`,
      );
    }
    throw new ManifestError(`invalid TOML: ${(error as Error).message}`);
  }

  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(toStrictJson(parsed, "manifest")) as Record<string, unknown>;
  } catch (error) {
    // TOML has nan and inf; the manifest is echoed as JSON, which has neither.
    const message = error instanceof WireError ? error.message : String(error);
    throw new ManifestError(message, fieldFromMessage(message));
  }

  const result = plugin.PluginManifestSchema.safeParse(raw);
  if (!result.success) {
    const lines = plugin.describeManifestIssues(result.error);
    const first = result.error.issues[0];
    const field = first ? formatIssuePath([...first.path, ...unknownKey(first)]) : undefined;
    throw new ManifestError(`invalid manifest: ${lines.join("; ")}`, field);
  }
  const section = result.data.plugin;
  return {
    plugin: {
      id: section.id,
      version: section.version,
      name: section.name,
      description: section.description,
    },
    raw,
    document: result.data,
  };
}

function firstLine(error: Error): string {
  return error.message.split("\n")[0] ?? error.message;
}

function unknownKey(issue: { code: string; keys?: readonly string[] }): string[] {
  return issue.code === "unrecognized_keys" && issue.keys?.[0] !== undefined ? [issue.keys[0]] : [];
}

/** `manifest.plugin.x is NaN, …` → `plugin.x`. */
function fieldFromMessage(message: string): string | undefined {
  const match = /^manifest\.(\S+) is /.exec(message);
  return match?.[1];
}
