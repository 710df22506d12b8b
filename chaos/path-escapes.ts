/**
 * Attack: path escapes and the directory↔symlink swap race against the file tools (issue 10.19).
 *
 * The tools are called the way a model (or a prompt injection) calls them: through the registry,
 * with only the arguments under its control, confined to a workspace next to an "outside"
 * directory that holds a marked secret.
 *
 * 1. Every escape we know of, against every file tool: `..`, absolute paths, symlinks to a file
 *    and to a directory outside, a dangling symlink (a write through it would create a file
 *    outside), /proc/self/root, /proc/self/cwd, NUL bytes, very long paths.
 * 2. The race: a real concurrent process swaps a workspace directory for a symlink to the outside
 *    directory as fast as it can while Read, Write, Edit, Grep and Glob go through it N times each.
 *
 * Property: 0 escapes — no output shows the secret, nothing is created or changed outside.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileTools, startSwapper } from "../packages/nexo/test/helpers/file-tools.js";
import { runAttack } from "./lib.js";

const SECRET = "CHAOS-OUTSIDE-SECRET";

await runAttack("path-escapes", async (attack) => {
  const root = realpathSync(attack.tempDir("escape"));
  const ws = join(root, "ws");
  const outside = join(root, "outside");
  mkdirSync(join(ws, "d"), { recursive: true });
  mkdirSync(outside);
  const call = fileTools(ws);
  const resetOutside = () => {
    for (const name of readdirSync(outside)) rmSync(join(outside, name), { recursive: true, force: true });
    writeFileSync(join(outside, "secret.txt"), `${SECRET}\n`);
  };
  resetOutside();
  /** Escaped when the output shows the secret or anything outside was created or changed. */
  const escaped = (output: string) =>
    output.includes(SECRET) ||
    readdirSync(outside).join() !== "secret.txt" ||
    readFileSync(join(outside, "secret.txt"), "utf8") !== `${SECRET}\n`;

  // 1. Known escapes.
  symlinkSync(outside, join(ws, "link-dir"));
  symlinkSync(join(outside, "secret.txt"), join(ws, "link-file"));
  symlinkSync(join(outside, "planted.txt"), join(ws, "dangling"));
  symlinkSync("../outside", join(ws, "relative-link"));
  const paths = [
    "../outside/secret.txt",
    join(outside, "secret.txt"),
    "link-dir/secret.txt",
    "link-file",
    "relative-link/secret.txt",
    "d/../../outside/secret.txt",
    `${ws}/../outside/secret.txt`,
    `/proc/self/root${outside}/secret.txt`,
    `/proc/self/cwd/../outside/secret.txt`,
    "link-dir/../outside/secret.txt",
    `d/${"../".repeat(40)}${outside.slice(1)}/secret.txt`,
    `${"a/".repeat(2_000)}${"../".repeat(2_001)}outside/secret.txt`,
    "secret.txt\u0000../outside/secret.txt",
  ];
  const writePaths = [...paths.map((p) => p.replace(/secret\.txt/, "planted.txt")), "dangling", "link-file"];
  const dirs = ["..", outside, "link-dir", "relative-link", "/proc/self/root", `${ws}/..`];
  const attempts: Array<[string, Record<string, unknown>]> = [
    ...paths.map((p): [string, Record<string, unknown>] => ["Read", { file_path: p }]),
    ...writePaths.map((p): [string, Record<string, unknown>] => ["Write", { file_path: p, content: "x" }]),
    ...paths.map((p): [string, Record<string, unknown>] => [
      "Edit",
      { file_path: p, old_string: SECRET, new_string: "CHANGED" },
    ]),
    ...dirs.map((d): [string, Record<string, unknown>] => [
      "Grep",
      { pattern: SECRET, path: d, output_mode: "content" },
    ]),
    ...dirs.map((d): [string, Record<string, unknown>] => ["Glob", { pattern: "**/*", path: d }]),
    ["Glob", { pattern: "../outside/*" }],
    ["Glob", { pattern: "link-dir/**" }],
    ["Grep", { pattern: SECRET, glob: "../**", output_mode: "content" }],
  ];
  let escapes = 0;
  for (const [tool, args] of attempts) {
    const result = await call(tool, args);
    if (escaped(result.output)) {
      escapes++;
      attack.note(`escape: ${tool} ${JSON.stringify(args).slice(0, 200)}`);
      resetOutside();
    }
  }
  attack.figure("known escapes tried", attempts.length);
  attack.figure("of them escaped", escapes);
  attack.expect(
    escapes === 0,
    `${escapes} of ${attempts.length} known escapes reached outside the workspace`,
  );
  for (const name of readdirSync(ws)) rmSync(join(ws, name), { recursive: true, force: true });

  // 2. The swap race.
  // Grep and Glob walk the tree in a worker: each call costs tens of milliseconds, not one.
  const many = attack.pick(200, 3_000);
  const fewer = attack.pick(50, 1_000);
  const resetInside = () => {
    rmSync(join(ws, "d"), { recursive: true, force: true });
    rmSync(join(ws, "d.real"), { recursive: true, force: true });
    mkdirSync(join(ws, "d"));
    writeFileSync(join(ws, "d", "f.txt"), "inside marker\n");
    resetOutside();
    writeFileSync(join(outside, "f.txt"), `${SECRET} marker\n`);
  };
  /** The text of the workspace's real d/f.txt, wherever the swapper has moved its directory. */
  const realInsideFile = (): string => {
    for (const dir of ["d", "d.real"]) {
      try {
        if (lstatSync(join(ws, dir)).isDirectory()) return readFileSync(join(ws, dir, "f.txt"), "utf8");
      } catch {
        // Mid-swap: try the other name.
      }
    }
    return "";
  };
  const kinds: Array<[string, number, (i: number) => [string, Record<string, unknown>], string]> = [
    ["Read", many, () => ["Read", { file_path: "d/f.txt" }], "inside marker"],
    ["Write", many, (i) => ["Write", { file_path: "d/new.txt", content: `attempt ${i}\n` }], ""],
    [
      "Edit",
      many,
      () => {
        // Flip the word the real file holds now (the swapper keeps it in d or d.real): with a
        // fixed alternation one refused edit would make every later one miss its old_string, and a
        // run could end with no edit that saw the real directory, proving nothing about the race.
        const current = realInsideFile();
        const [from, to] = current.includes("MARKER") ? ["MARKER", "marker"] : ["marker", "MARKER"];
        return ["Edit", { file_path: "d/f.txt", old_string: from, new_string: to }];
      },
      "",
    ],
    ["Grep", fewer, () => ["Grep", { pattern: "marker|SECRET", output_mode: "content" }], "inside marker"],
    ["Glob", fewer, () => ["Glob", { pattern: "**/*.txt" }], "f.txt"],
  ];
  let raceEscapes = 0;
  let raceAttempts = 0;
  let swaps = 0;
  const started = performance.now();
  for (const [kind, n, make, seenInside] of kinds) {
    resetInside();
    const outsideBefore = () => readdirSync(outside).sort().join();
    const expectedOutside = outsideBefore();
    const swapper = await startSwapper(join(ws, "d"), outside);
    let inside = 0;
    let kindEscapes = 0;
    try {
      for (let i = 0; i < n; i++) {
        const [tool, args] = make(i);
        const result = await call(tool, args);
        raceAttempts++;
        const changed =
          outsideBefore() !== expectedOutside ||
          readFileSync(join(outside, "f.txt"), "utf8") !== `${SECRET} marker\n`;
        if (result.output.includes(SECRET) || changed) {
          kindEscapes++;
          resetInside();
        } else if (!result.isError && (seenInside === "" || result.output.includes(seenInside))) inside++;
      }
    } finally {
      swaps += await swapper.stop();
    }
    raceEscapes += kindEscapes;
    attack.figure(`${kind}: escapes of ${n} attempts under the swap race`, kindEscapes);
    attack.expect(kindEscapes === 0, `${kind}: ${kindEscapes} of ${n} attempts reached outside`);
    attack.expect(inside > 0, `${kind}: no attempt ever saw the real directory: the race was not exercised`);
  }
  attack.figure("race attempts", raceAttempts);
  attack.figure("race escapes", raceEscapes);
  attack.figure("swaps made by the attacker", swaps);
  attack.figure("race duration", (performance.now() - started) / 1000, "s");
  attack.expect(existsSync(join(outside, "secret.txt")), "the outside secret was removed");
});
