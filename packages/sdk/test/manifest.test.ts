import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ManifestError, parseManifest } from "nexo-plugin-sdk";

const VALID = `
[plugin]
id = "slack"
version = "0.2.0"
name = "Slack Channel"
description = "Bridges Slack"
min_nexo_version = ">=0.1.0"
built = 2026-05-01
homepage = "https://example.com"

[plugin.entrypoint]
command = "/usr/local/bin/plugin-slack"
env = { RUST_LOG = "info" }

[plugin.extends]
channels = ["slack"]
tools = ["slack_post", "ext_slack_search"]

[[plugin.channels.register]]
kind = "slack"
adapter = "SlackChannelAdapter"

[extra_section]
anything = [1, 2]
`;

function expectManifestError(toml: string, field: string | undefined, message: RegExp): void {
  assert.throws(
    () => parseManifest(toml),
    (e: unknown) => {
      assert.ok(e instanceof ManifestError, String(e));
      assert.equal(e.field, field);
      assert.match(e.message, message);
      return true;
    },
  );
}

describe("parseManifest", () => {
  test("a valid manifest: section, raw JSON (dates as strings, unknown sections kept), typed document", () => {
    const parsed = parseManifest(VALID);
    assert.deepEqual(parsed.plugin, {
      id: "slack",
      version: "0.2.0",
      name: "Slack Channel",
      description: "Bridges Slack",
    });
    const raw = parsed.raw as { plugin: Record<string, unknown>; extra_section: unknown };
    assert.equal(raw.plugin.built, "2026-05-01");
    assert.deepEqual(raw.extra_section, { anything: [1, 2] });
    assert.deepEqual(JSON.parse(JSON.stringify(parsed.raw)), parsed.raw, "raw is plain JSON");
    assert.deepEqual(parsed.document.plugin.extends?.tools, ["slack_post", "ext_slack_search"]);
  });

  test("invalid TOML names the line and column", () => {
    expectManifestError("[plugin]\nid = \n", undefined, /invalid TOML at line 2, column \d+/);
  });

  test("every rule of the contract's manifest section is enforced, naming the key", () => {
    const swap = (from: string, to: string) => {
      assert.ok(VALID.includes(from), from);
      return VALID.replace(from, to);
    };
    expectManifestError(swap('id = "slack"', 'id = "Slack"'), "plugin.id", /plugin\.id: must match/);
    expectManifestError(swap('version = "0.2.0"', 'version = "v2"'), "plugin.version", /semantic version/);
    expectManifestError(swap('name = "Slack Channel"\n', ""), "plugin.name", /plugin\.name/);
    expectManifestError(
      swap('description = "Bridges Slack"', 'description = "  "'),
      "plugin.description",
      /blank/,
    );
    expectManifestError(
      swap('env = { RUST_LOG = "info" }', 'env = { NEXO_TOKEN = "x" }'),
      "plugin.entrypoint.env.NEXO_TOKEN",
      /reserved/,
    );
    expectManifestError(
      swap('tools = ["slack_post", "ext_slack_search"]', 'tools = ["post"]'),
      "plugin.extends.tools[0]",
      /must be named slack_\* or ext_slack_\*/,
    );
    expectManifestError(
      swap('channels = ["slack"]', 'channels = ["slack"]\nwidgets = ["w"]'),
      "plugin.extends.widgets",
      /unknown key/,
    );
    expectManifestError(
      swap('channels = ["slack"]', 'channels = ["slack"]\nhooks = ["slack"]'),
      "plugin.extends.hooks[0]",
      /already declared in channels/,
    );
  });

  test("values JSON cannot represent (TOML nan, inf) are refused, since the manifest is echoed as JSON", () => {
    expectManifestError(
      VALID.replace('homepage = "https://example.com"', "ratio = nan"),
      "plugin.ratio",
      /manifest\.plugin\.ratio is NaN/,
    );
    expectManifestError(
      VALID.replace("anything = [1, 2]", "anything = [1, inf]"),
      "extra_section.anything[1]",
      /Infinity/,
    );
  });

  test("a manifest that is not a string", () => {
    expectManifestError(undefined as unknown as string, undefined, /must be a string/);
  });
});
