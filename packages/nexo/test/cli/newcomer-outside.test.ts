/**
 * Issue 14's "done when", outside the clone (14.3, 14.15): the CLI and the SDK packed by
 * `scripts/pack-packages.mjs` install from their tarball files into a directory that has nothing
 * to do with the repository, and the installed `nexo` writes a TypeScript plugin and a TypeScript
 * microapp whose `npm install && npm test` pass (the microapp's test runs the installed nexo as its
 * daemon) and that `nexo plugin check` / `nexo microapp check` pass, and a Python plugin that
 * `nexo plugin check` passes; then a config directory made by `nexo init` enables both plugins and
 * `nexo chat` has the agent call each. The SDK as installed imports no `@nexo/wire`, and every module its
 * type declarations import is inside it. (The scaffolds' Python tests and the printed
 * extensions.yaml entry are tested in plugin-new.test.ts and microapp-new.test.ts.)
 *
 * npm installs with `--prefer-offline`: the registry packages (typescript, zod, …) come from the
 * npm cache that the repository's own install filled. One test, the branches run side by side.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = realpathSync(fileURLToPath(new URL("../../../../", import.meta.url)));
const NPM_INSTALL = ["install", "--prefer-offline", "--no-audit", "--no-fund"];

interface Run {
  code: number | null;
  output: string;
}

/**
 * Runs a command to its end (killed after `timeoutMs`), stdout and stderr together; `input`, when
 * given, is its whole stdin (piped, then closed).
 */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  input?: string,
  timeoutMs = 600_000,
) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.end(input ?? "");
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output: `$ ${command} ${args.join(" ")} (in ${cwd})\n${output}` });
    });
  });
}

async function ok(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  input?: string,
): Promise<string> {
  const result = await run(command, args, cwd, env, input);
  assert.equal(result.code, 0, result.output);
  return result.output;
}

/** Every file under `dir` whose name matches `pattern`. */
function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && pattern.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("a newcomer outside the clone, on the packed CLI and SDK", () => {
  it("installs both tarballs, scaffolds, tests and checks a TS plugin and a TS microapp, then chats with both plugins", {
    timeout: 900_000,
  }, async (t) => {
    const started = performance.now();
    const took = (step: string) =>
      t.diagnostic(`${step}: ${Math.round((performance.now() - started) / 1000)} s`);
    const home = realpathSync(mkdtempSync(join(tmpdir(), "nexo-outside-")));
    after(() => rmSync(home, { recursive: true, force: true }));
    assert.ok(!home.startsWith(REPO), `${home} is outside ${REPO}`);

    // Nothing of this test run leaks into the commands: no npm_* of a parent npm, no NEXO_*.
    const base = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !/^(npm_|NEXO_|NODE_TEST_CONTEXT$|NODE_OPTIONS$)/i.test(key),
      ),
    );

    const packed = join(home, "packed");
    const pack = await ok(
      process.execPath,
      [join(REPO, "scripts", "pack-packages.mjs"), "--out", packed],
      REPO,
      base,
    );
    const tarballs = readdirSync(packed).sort();
    assert.deepEqual(tarballs, ["nexo-0.1.0.tgz", "nexo-plugin-sdk-0.1.0.tgz"], pack);

    // The CLI installed from its file (what `npm install -g` does, in a directory of the test's
    // own), its bin directory on PATH.
    const tools = join(home, "tools");
    mkdirSync(tools);
    writeFileSync(join(tools, "package.json"), '{ "name": "tools", "private": true }\n');
    await ok("npm", [...NPM_INSTALL, join(packed, "nexo-0.1.0.tgz")], tools, base);
    assert.ok(!existsSync(join(tools, "node_modules", "@nexo")), "no @nexo/* package was installed");
    // The install built the startup snapshot of `nexo agent` with this node (bin/build-snapshot.mjs).
    const snapshots = join(tools, "node_modules", "nexo", "bundle", "snapshot");
    assert.deepEqual(
      readdirSync(snapshots)
        .filter((name) => name.endsWith(".blob"))
        .sort(),
      ["agent.blob"],
    );
    took("packed and installed the CLI");
    // Deadlines for a loaded machine: `plugin check` waits 5 s for initialize by default.
    const env = {
      ...base,
      NEXO_PLUGIN_INIT_TIMEOUT_MS: "60000",
      PATH: `${join(tools, "node_modules", ".bin")}${delimiter}${base.PATH ?? ""}`,
    };
    const work = join(home, "work");
    mkdirSync(work);
    assert.match(await ok("nexo", ["--version"], work, env), /0\.1\.0/);

    const typescriptPlugin = async () => {
      const made = await ok("nexo", ["plugin", "new", "x", "--lang", "ts"], work, env);
      assert.match(made, /a TypeScript plugin "x"/);
      const dir = join(work, "x");
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      assert.equal(pkg.dependencies["nexo-plugin-sdk"], "file:nexo-plugin-sdk-0.1.0.tgz");
      await ok("npm", NPM_INSTALL, dir, env);
      const sdk = join(dir, "node_modules", "nexo-plugin-sdk");
      assert.ok(!existsSync(join(dir, "node_modules", "@nexo")), "the SDK pulled in no @nexo/* package");
      for (const file of filesUnder(join(sdk, "dist"), /\.(js|d\.ts)$/)) {
        assert.doesNotMatch(readFileSync(file, "utf8"), /["']@nexo\/wire/, `${file} imports @nexo/wire`);
      }
      // Its types resolve inside it: each relative import of a .d.ts names a file that is there.
      for (const file of filesUnder(join(sdk, "dist"), /\.d\.ts$/)) {
        for (const [, specifier] of readFileSync(file, "utf8").matchAll(
          /(?:from |import\()"(\.[^"]+)\.js"/g,
        )) {
          const target = join(dirname(file), `${specifier}.d.ts`);
          assert.ok(existsSync(target), `${file}: ${specifier}.js has no ${target}`);
        }
      }
      const test = await ok("npm", ["test"], dir, env);
      assert.match(test, /# pass 1/);
      const check = await ok("nexo", ["plugin", "check", "x"], work, env);
      assert.match(check, /passed/);
      took("TypeScript plugin done");
    };

    const typescriptMicroapp = async () => {
      const made = await ok("nexo", ["microapp", "new", "y", "--lang", "ts"], work, env);
      assert.match(
        made,
        new RegExp(`path: ${join(work, "y", "main.mjs")}\\n +capabilities_grant: \\[agents_crud\\]`),
      );
      const dir = join(work, "y");
      await ok("npm", NPM_INSTALL, dir, env);
      // Its test starts the installed nexo (on PATH) as the daemon and has an agent call the tool.
      const test = await ok("npm", ["test"], dir, env);
      assert.match(test, /# pass 1/);
      const check = await ok("nexo", ["microapp", "check", "y"], work, env);
      assert.match(check, /microapp check: passed/);
      took("TypeScript microapp done");
    };

    const pythonPlugin = async () => {
      await ok("nexo", ["plugin", "new", "p"], work, env);
      assert.match(await ok("nexo", ["plugin", "check", "p"], work, env), /passed/);
    };

    const results = await Promise.allSettled([typescriptPlugin(), typescriptMicroapp(), pythonPlugin()]);
    for (const result of results) if (result.status === "rejected") throw result.reason;

    // Enable both plugins in a config directory of the newcomer's own, as getting-started.md says,
    // and have the agent call each tool from `nexo chat` (piped: each approval takes the next line).
    await ok("nexo", ["init", "mine", "--yes", "--provider", "scripted"], work, env);
    writeFileSync(join(work, "mine", "plugins.yaml"), "plugins:\n  - dir: ../x\n  - dir: ../p\n");
    assert.match(await ok("nexo", ["config", "validate", "mine"], work, env), /valid/i);
    const chat = await ok(
      "nexo",
      ["chat", "--config", "mine"],
      work,
      env,
      'call x_greet {"name":"Ada"}\no\ncall p_greet {"name":"Bob"}\no\n',
    );
    assert.match(chat, /Hello, Ada!/);
    assert.match(chat, /Hello, Bob!/);
    took("both plugins answered in nexo chat");

    // Every process this test started, daemons and microapps included, is gone.
    const left = spawnSync("pgrep", ["-f", home], { encoding: "utf8" });
    assert.equal(left.stdout.trim(), "", `processes left running: ${left.stdout}`);
  });
});
