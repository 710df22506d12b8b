/**
 * The plugin conformance kit, host side: every scenario in scenarios/ played against the real
 * PluginManager (and through it PluginHost, the broker bridge, the services and the five
 * wrappers), with scripted-child.mjs as the plugin. The format is documented in docs/plugins.md,
 * "Conformance scenarios".
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runScenario } from "./runner.js";
import { loadScenario, ScenarioFormatError } from "./scenario.js";

const SCENARIOS = fileURLToPath(new URL("./scenarios/", import.meta.url));
const files = readdirSync(SCENARIOS)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((name) => join(SCENARIOS, name));

/** A malformed file has none here; its own test then fails with the format error. */
function knownIssueOf(file: string): string | undefined {
  try {
    return loadScenario(file).known_issue;
  } catch (error) {
    if (error instanceof ScenarioFormatError) return undefined;
    throw error;
  }
}

// Each scenario has its own environment (temp root, broker, registries, child), and most of a
// scenario's time is spent waiting on its child: four at once.
describe("plugin conformance scenarios", { concurrency: 4 }, () => {
  it("finds the scenarios and every one is well-formed", () => {
    assert.ok(files.length > 0, "no scenarios found");
    for (const file of files) loadScenario(file);
  });

  for (const file of files) {
    const name = file.slice(SCENARIOS.length, -".json".length);
    const knownIssue = knownIssueOf(file);
    it(name, { timeout: 30_000, ...(knownIssue ? { todo: `known issue: ${knownIssue}` } : {}) }, () =>
      runScenario(file),
    );
  }
});
