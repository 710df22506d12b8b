/**
 * The boot diff of what a microapp declares it needs (`plugin.toml` `[capabilities.admin]`) against
 * what the operator granted (`extensions.yaml` `capabilities_grant`):
 *
 * | outcome                  | effect                                                        |
 * | required, not granted    | the microapp is refused: never spawned; the log names each one |
 * | optional, not granted    | a warning; its calls are answered -32004 until granted         |
 * | granted, not declared    | a warning; the grant works (forward compatibility)             |
 * | granted, unknown name    | a warning (probably a typo); it gates nothing this nexo knows  |
 *
 * The grant list is what the runtime gate checks, whatever the declaration says.
 */
import type { microapp } from "@nexo/wire/schemas";
import * as admin from "@nexo/wire/schemas/admin";

export interface CapabilityReport {
  /** Required by the manifest, not granted: the microapp must not run. */
  readonly missingRequired: readonly string[];
  readonly missingOptional: readonly string[];
  readonly undeclared: readonly string[];
  /** Granted names this nexo does not know. */
  readonly unknown: readonly string[];
  /** What the runtime gate allows: the grant, as a set. */
  readonly granted: ReadonlySet<string>;
}

export function diffCapabilities(
  manifest: microapp.MicroappManifest,
  grant: readonly string[],
): CapabilityReport {
  const granted = new Set(grant);
  const required = manifest.capabilities.admin?.required ?? [];
  const optional = manifest.capabilities.admin?.optional ?? [];
  const declared = new Set([...required, ...optional]);
  return {
    missingRequired: required.filter((name) => !granted.has(name)),
    missingOptional: optional.filter((name) => !granted.has(name)),
    undeclared: [...granted].filter((name) => !declared.has(name)),
    unknown: [...granted].filter((name) => !admin.isKnownCapability(name)),
    granted,
  };
}

/** The report's warnings, one sentence each, for the log and the microapp's status. */
export function capabilityWarnings(id: string, report: CapabilityReport): string[] {
  const warnings: string[] = [];
  for (const name of report.missingOptional)
    warnings.push(`optional capability ${name} is not granted; calls needing it are refused (-32004)`);
  for (const name of report.undeclared)
    warnings.push(`capability ${name} is granted but ${id}'s plugin.toml does not declare it; allowed`);
  for (const name of report.unknown)
    warnings.push(`capability ${name} is granted but this nexo knows no such capability (a typo?)`);
  return warnings;
}
