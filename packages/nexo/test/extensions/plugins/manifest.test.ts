/**
 * Loading nexo-plugin.toml: the wire schema's rules, the host's own checks (entrypoint command,
 * min_nexo_version, host networking), the 64-character tool-name decision, and errors that name
 * the file, the line and the key.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ConfigError } from "../../../src/config/errors.js";
import { loadPluginManifest, parsePluginManifest } from "../../../src/extensions/plugins/manifest.js";
import {
  parseSemVer,
  parseVersionRequirement,
  satisfiesRequirement,
  VersionSyntaxError,
  versionSatisfies,
} from "../../../src/extensions/plugins/version-requirement.js";

const dir = mkdtempSync(join(tmpdir(), "nexo-manifest-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "nexo-plugin.toml");
const env = { PATH: process.env.PATH };

const base = (extra = "", plugin = "") => `
[plugin]
id = "weather"
version = "0.2.0"
name = "Weather"
description = "Forecasts"
min_nexo_version = ">=0.1.0"
${plugin}

[plugin.entrypoint]
command = "node"
args = ["plugin.mjs"]
${extra}
`;

function parse(
  text: string,
  options: { env?: Record<string, string | undefined>; nexoVersion?: string } = {},
) {
  return parsePluginManifest(text, { file, env, nexoVersion: "0.1.0", ...options });
}

function problems(text: string, options?: Parameters<typeof parse>[1]): string[] {
  try {
    parse(text, options);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message.split("\n");
  }
  assert.fail("the manifest was accepted");
}

describe("plugin manifest", () => {
  it("loads a valid manifest and resolves its command, directory and channel kinds", async () => {
    writeFileSync(
      file,
      base(
        `
[[plugin.channels.register]]
kind = "weather_chat"
adapter = "WeatherChat"

[plugin.extends]
channels = ["weather_chat", "weather_alerts"]
tools = ["weather_now"]`,
      ),
    );
    const loaded = await loadPluginManifest(dir, { env, nexoVersion: "0.1.0" });
    assert.equal(loaded.id, "weather");
    assert.equal(loaded.file, file);
    assert.equal(loaded.dir, dir);
    assert.equal(loaded.command.path, process.execPath.replace(/\/node$/, "/node"));
    assert.deepEqual(loaded.channelKinds, ["weather_chat", "weather_alerts"]);
    assert.deepEqual(loaded.manifest.plugin.extends?.tools, ["weather_now"]);
    // The manifest file itself is accepted as well as its directory.
    assert.equal((await loadPluginManifest(file, { env, nexoVersion: "0.1.0" })).id, "weather");
  });

  it("reports every problem with the file, the line and the key", () => {
    const lines = problems(`
[plugin]
id = "Weather"
version = "two"
name = "W"
description = "d"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "node"
env = { NEXO_TOKEN = "x" }

[plugin.extends]
hooks = ["before_message"]
tools = ["Weather_now", "other_tool"]
channels_extra = ["x"]
`);
    assert.ok(
      lines.includes(
        `${file}:3:1: plugin.id: must match ^[a-z][a-z0-9_]{0,31}$ (lowercase slug, max 32 chars)`,
      ),
      lines.join("\n"),
    );
    assert.ok(lines.some((l) => l.startsWith(`${file}:4:1: plugin.version: must be a semantic version`)));
    assert.ok(
      lines.some(
        (l) =>
          l.startsWith(`${file}:11:`) &&
          l.includes("plugin.entrypoint.env.NEXO_TOKEN") &&
          l.includes("reserved"),
      ),
    );
    assert.ok(
      lines.some(
        (l) => l.startsWith(`${file}:15:`) && l.includes('plugin.extends.tools[0]: "Weather_now" must match'),
      ),
    );
    assert.ok(lines.some((l) => l.includes("plugin.extends.channels_extra") && l.includes("unknown key")));
  });

  it("refuses typos in [plugin.entrypoint] and [plugin.supervisor] with a did-you-mean (issue 14.4)", () => {
    const lines = problems(
      base('arg = ["plugin.mjs"]\n\n[plugin.supervisor]\nrespwan = true\nmax_attempt = 3'),
    );
    assert.ok(
      lines.some(
        (l) => l.includes("plugin.entrypoint") && l.includes('unknown key "arg" (did you mean "args"?)'),
      ),
      lines.join("\n"),
    );
    assert.ok(
      lines.some(
        (l) =>
          l.includes("plugin.supervisor") && l.includes('unknown key "respwan" (did you mean "respawn"?)'),
      ),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => l.includes('unknown key "max_attempt" (did you mean "max_attempts"?)')),
      lines.join("\n"),
    );
  });

  it("allows tool names up to 64 characters but not 65, inside the plugin's namespace", () => {
    const name64 = `weather_${"x".repeat(56)}`;
    assert.equal(name64.length, 64);
    const ok = parse(base(`[plugin.extends]\ntools = ["${name64}", "ext_weather_now"]`));
    assert.deepEqual(ok.manifest.plugin.extends?.tools, [name64, "ext_weather_now"]);

    const lines = problems(
      base(`[plugin.extends]\ntools = ["${name64}x", "other_now", "weather_now", "weather_now"]`),
    );
    assert.ok(
      lines.some((l) => l.includes("tools[0]") && l.includes("at most 64 chars")),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => l.includes("tools[1]") && l.includes("must be named weather_* or ext_weather_*")),
    );
    assert.ok(lines.some((l) => l.includes("tools[3]") && l.includes("listed twice")));
  });

  it("refuses an id that sits in tools and in another extends list", () => {
    const lines = problems(base(`[plugin.extends]\nhooks = ["weather_now"]\ntools = ["weather_now"]`));
    assert.ok(
      lines.some((l) => l.includes("tools[0]") && l.includes("already declared in hooks")),
      lines.join("\n"),
    );
  });

  it("requires an entrypoint whose command resolves, relative commands against the plugin dir", () => {
    const noEntrypoint = `
[plugin]
id = "weather"
version = "0.2.0"
name = "Weather"
description = "Forecasts"
min_nexo_version = ">=0.1.0"
`;
    assert.ok(problems(noEntrypoint).some((l) => l.includes("plugin.entrypoint: missing")));

    const missing = problems(base().replace('command = "node"', 'command = "./bin/not-there"'));
    assert.ok(
      missing.some((l) => l.includes("plugin.entrypoint.command") && l.includes("does not exist")),
      missing.join("\n"),
    );

    writeFileSync(join(dir, "run.sh"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(dir, "run.sh"), 0o755);
    const relative = parse(base().replace('command = "node"', 'command = "./run.sh"'));
    assert.equal(relative.command.path, join(dir, "run.sh"));

    const notOnPath = problems(base().replace('command = "node"', 'command = "no-such-binary-here"'));
    assert.ok(notOnPath.some((l) => l.includes("was not found on PATH")));
  });

  it("checks min_nexo_version against the running nexo", () => {
    const lines = problems(base().replace(">=0.1.0", ">=0.3"), { nexoVersion: "0.2.5" });
    assert.ok(
      lines.some((l) =>
        l.includes("plugin.min_nexo_version: this plugin needs nexo >=0.3, but this is nexo 0.2.5"),
      ),
      lines.join("\n"),
    );
    assert.equal(parse(base().replace(">=0.1.0", "^0.2"), { nexoVersion: "0.2.5" }).id, "weather");
  });

  it('accepts network = "host" only with NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1', () => {
    const manifest = base(`[plugin.sandbox]\nenabled = true\nnetwork = "host"`);
    const lines = problems(manifest);
    assert.ok(
      lines.some(
        (l) => l.includes("plugin.sandbox.network") && l.includes("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1"),
      ),
    );
    assert.equal(parse(manifest, { env: { ...env, NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: "1" } }).id, "weather");
    const typo = problems(manifest, { env: { ...env, NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: "ture" } });
    assert.ok(typo.some((l) => l.includes("is not understood")));
  });

  it("keeps ${state_dir} literal and rejects denylisted sandbox paths", () => {
    const ok = parse(base(`[plugin.sandbox]\nenabled = true\nfs_write_paths = ["\${state_dir}/cache"]`));
    assert.deepEqual(ok.manifest.plugin.sandbox?.fs_write_paths, ["${state_dir}/cache"]);
    const lines = problems(
      base(`[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/etc"]\nallow_all = true`),
    );
    assert.ok(
      lines.some((l) => l.includes("plugin.sandbox.fs_read_paths[0]") && l.includes("/etc/shadow")),
      lines.join("\n"),
    );
    assert.ok(lines.some((l) => l.includes("plugin.sandbox.allow_all") && l.includes("unknown key")));
  });

  it("names the file when it cannot be read or the TOML does not parse", async () => {
    await assert.rejects(loadPluginManifest(join(dir, "nope")), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /nope: no such plugin directory or manifest file/);
      return true;
    });
    const lines = problems("[plugin\nid = 1");
    assert.match(lines[0] ?? "", new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1:`));
  });
});

describe("version requirements (Cargo semantics)", () => {
  const cases: Array<[string, string, boolean]> = [
    ["0.1.0", ">=0.1.0", true],
    ["0.0.9", ">=0.1.0", false],
    ["0.2.0", "^0.1", false],
    ["0.1.9", "^0.1", true],
    ["1.9.0", "^1.2.3", true],
    ["2.0.0", "^1.2.3", false],
    ["0.0.4", "^0.0.3", false],
    ["0.0.3", "0.0.3", true],
    ["1.2.9", "~1.2.3", true],
    ["1.3.0", "~1.2.3", false],
    ["1.9.0", "~1", true],
    ["1.3.0", ">1.2", true],
    ["1.2.9", ">1.2", false],
    ["1.2.9", "<=1.2", true],
    ["1.3.0", "<=1.2", false],
    ["1.2.7", "=1.2", true],
    ["1.2.7", "1.2.*", true],
    ["1.3.0", "1.2.*", false],
    ["5.0.0", "*", true],
    ["1.5.0", ">=1.2, <2", true],
    ["2.0.0", ">=1.2, <2", false],
    ["0.2.0-beta.1", ">=0.1.0", false],
    ["0.2.0-beta.2", ">=0.2.0-beta.1", true],
    ["0.2.0-alpha", ">=0.2.0-beta.1", false],
    ["2.0.0-rc.1", "^1.0.0", false],
  ];
  for (const [version, requirement, expected] of cases) {
    it(`${version} ${expected ? "satisfies" : "does not satisfy"} ${requirement}`, () => {
      assert.equal(versionSatisfies(version, requirement), expected);
    });
  }

  it("orders pre-releases by semver precedence", () => {
    const req = parseVersionRequirement(">=1.0.0-alpha.2");
    assert.equal(satisfiesRequirement(parseSemVer("1.0.0-alpha.10"), req), true);
    assert.equal(satisfiesRequirement(parseSemVer("1.0.0-alpha.1"), req), false);
    assert.equal(satisfiesRequirement(parseSemVer("1.0.0"), req), true);
  });

  it("rejects text that is not a version or a requirement", () => {
    assert.throws(() => parseSemVer("1.2"), VersionSyntaxError);
    assert.throws(() => parseVersionRequirement(">=1.x.3"), VersionSyntaxError);
    assert.throws(() => parseVersionRequirement(""), VersionSyntaxError);
  });
});
