/**
 * A writer killed mid-write must never leave a corrupt config: a real child process runs
 * writeFileAtomic on a large file and is SIGKILLed while its temp file exists.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { setImmediate as nextTick, setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { isTempFileName, listConfigFiles, loadConfigFile } from "../../src/config/index.js";

const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url));
const writeModule = new URL("../../src/config/write.ts", import.meta.url).href;
const PAD = 32 * 1024 * 1024;
const MAX_ATTEMPTS = 16;

const oldText = `value: old\npad: ${"o".repeat(PAD)}\n`;
const newText = `value: new\npad: ${"n".repeat(PAD)}\n`;

// The child builds the new content, says "ready", then writes; it is killed before it can finish.
const childSource = `
const [moduleUrl, target, pad] = process.argv.slice(2);
const { writeFileAtomic } = await import(moduleUrl);
const text = "value: new\\npad: " + "n".repeat(Number(pad)) + "\\n";
process.stdout.write("ready\\n");
await writeFileAtomic(target, text);
process.stdout.write("done\\n");
`;

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "nexo-config-crash-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  /** Milliseconds from the temp file's appearance to the child's exit (natural or killed). */
  elapsedMs: number;
  /** Sizes of the temp files this run left behind; a size below the full length means mid-write. */
  leftoverSizes: number[];
  finished: boolean;
}

/** Runs one writer; kills it `killAfterMs` after its temp file appears, or lets it finish. */
async function runWriter(
  script: string,
  configDir: string,
  target: string,
  killAfterMs: number | undefined,
): Promise<Run> {
  const child = spawn(process.execPath, ["--import", "tsx", script, writeModule, target, String(PAD)], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  let output = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    output += chunk;
  });
  const deadline = Date.now() + 20_000;
  while (!output.includes("ready") && child.exitCode === null && Date.now() < deadline) await sleep(1);
  const tempsBefore = new Set(readdirSync(configDir).filter(isTempFileName));
  const isNewTemp = (name: string) => isTempFileName(name) && !tempsBefore.has(name);
  while (child.exitCode === null && Date.now() < deadline) {
    if (readdirSync(configDir).some(isNewTemp)) break;
    await nextTick();
  }
  const start = performance.now();
  if (killAfterMs !== undefined) {
    if (killAfterMs > 0) await sleep(killAfterMs);
    child.kill("SIGKILL");
  }
  await exited;
  const elapsedMs = performance.now() - start;
  const leftoverSizes = readdirSync(configDir)
    .filter(isNewTemp)
    .map((name) => statSync(join(configDir, name)).size);
  return { elapsedMs, leftoverSizes, finished: output.includes("done") };
}

it("a writer SIGKILLed mid-write leaves the complete old or new file, never a mix", async () => {
  const script = join(dir, "writer-child.mjs");
  writeFileSync(script, childSource);
  const configDir = mkdtempSync(join(dir, "config-"));
  const target = join(configDir, "agents.yaml");
  const schema = z.object({ value: z.enum(["old", "new"]), pad: z.string() });
  const fullSize = Buffer.byteLength(newText);

  const check = async (label: string) => {
    const text = readFileSync(target, "utf8");
    assert.ok(text === oldText || text === newText, `${label}: target is neither the old nor the new file`);
    // Stale temp files may stay behind, but only under the documented name and never read as config.
    for (const name of readdirSync(configDir)) {
      assert.ok(name === "agents.yaml" || isTempFileName(name), `${label}: unexpected file ${name}`);
      if (isTempFileName(name)) assert.match(name, /^\.agents\.yaml\.tmp-\d+-[0-9a-f]{8}$/);
    }
    assert.deepEqual(await listConfigFiles(configDir), [target]);
    const loaded = await loadConfigFile(target, schema, { env: {} });
    assert.equal(loaded.pad, (loaded.value === "old" ? "o" : "n").repeat(PAD));
    return text;
  };

  // An undisturbed run: the new file lands whole and nothing is left behind.
  writeFileSync(target, oldText);
  const calibration = await runWriter(script, configDir, target, undefined);
  assert.ok(calibration.finished);
  assert.deepEqual(calibration.leftoverSizes, []);
  assert.equal(await check("undisturbed"), newText);

  // Kill at points spread over the time a write takes, then at random points until one lands
  // while the temp file is only partly written.
  const fractions = [0, 0.1, 0.25, 0.5, 0.75, 0.9];
  let caughtMidWrite = 0;
  for (
    let attempt = 0;
    attempt < MAX_ATTEMPTS && (attempt < fractions.length || caughtMidWrite === 0);
    attempt += 1
  ) {
    writeFileSync(target, oldText);
    const fraction = fractions[attempt] ?? Math.random();
    const run = await runWriter(script, configDir, target, Math.round(calibration.elapsedMs * fraction));
    const text = await check(`attempt ${attempt}`);
    if (run.leftoverSizes.some((size) => size < fullSize)) {
      caughtMidWrite += 1;
      assert.equal(text, oldText, "killed before the rename, so the old file must be intact");
    }
  }
  assert.ok(caughtMidWrite > 0, `never caught the writer mid-write in ${MAX_ATTEMPTS} attempts`);
});
