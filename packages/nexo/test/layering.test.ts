/**
 * The architecture's layering, pinned: reads the import statements of every source file (type-only
 * imports included, since a type cycle is still two ideas that cannot be read apart) and checks
 * that folders only import their own layer or lower ones, as docs/architecture.md states, that no
 * file-level import cycle exists, and that the packages depend on each other in one direction.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGES = fileURLToPath(new URL("../../", import.meta.url));
const NEXO_SRC = join(PACKAGES, "nexo/src");

/**
 * The layers of packages/nexo/src, lowest first. A file may import files of its own layer and of
 * lower layers. Keep this list and the table in docs/architecture.md the same. The daemon is the
 * runtime (components, services facade, routing); the admin RPC and the doors sit above it and
 * call its services, and the CLI composes them (e.g. `nexo start` adds the AppServer listener
 * and the microapps' admin RPC to the daemon's components).
 */
const LAYERS: readonly (readonly string[])[] = [
  [
    "version.ts",
    "paths.ts",
    "log.ts",
    "log-format.ts",
    "iso-time.ts",
    "conversation.ts",
    "permissions.ts",
    "secrets",
    "process",
  ],
  ["config", "store", "broker", "channels", "memory", "skills", "scaffold"],
  ["engine"],
  ["extensions"],
  ["daemon"],
  ["admin"],
  ["doors"],
  ["doctor", "chat"],
  ["cli", "index.ts"],
];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Every module specifier a file imports or re-exports, static or dynamic. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) found.push((match[1] ?? match[2])!);
  return found;
}

/** The .ts file a relative specifier names (`./x.js` is written for `./x.ts`). */
function resolveRelative(from: string, specifier: string): string {
  return resolve(dirname(from), specifier).replace(/\.js$/, ".ts");
}

function layerOf(file: string): number {
  const top = relative(NEXO_SRC, file).split("/")[0]!;
  const index = LAYERS.findIndex((layer) => layer.includes(top));
  assert.notEqual(index, -1, `${top} is in no layer: add it to LAYERS and to docs/architecture.md`);
  return index;
}

function graph(files: string[]): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of files) {
    edges.set(
      file,
      specifiers(file)
        .filter((s) => s.startsWith("."))
        .map((s) => resolveRelative(file, s)),
    );
  }
  return edges;
}

/** Each cycle once, as the list of files around it (Tarjan's strongly connected components). */
function cycles(edges: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = (edges.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) found.push(component);
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

const nexoFiles = sourceFiles(NEXO_SRC);
const nexoGraph = graph(nexoFiles);

describe("layering of packages/nexo/src", () => {
  it("no folder imports a higher layer", () => {
    const upward: string[] = [];
    for (const [file, targets] of nexoGraph) {
      for (const target of targets) {
        if (!target.startsWith(NEXO_SRC)) {
          upward.push(`${relative(PACKAGES, file)} reaches outside src: ${relative(PACKAGES, target)}`);
          continue;
        }
        if (layerOf(target) > layerOf(file)) {
          upward.push(`${relative(NEXO_SRC, file)} → ${relative(NEXO_SRC, target)}`);
        }
      }
    }
    assert.deepEqual(upward, [], `upward imports:\n${upward.join("\n")}`);
  });

  it("has no import cycle", () => {
    const found = cycles(nexoGraph).map((c) => c.map((f) => relative(NEXO_SRC, f)).join(" ⇄ "));
    assert.deepEqual(found, [], `import cycles:\n${found.join("\n")}`);
  });

  it("the checker sees type-only, re-exported and dynamic imports and finds cycles", () => {
    const sample = [
      'import type { A } from "./a.js";',
      'export { B } from "../b.js";',
      'const c = await import("./c.js");',
      'import {\n  D,\n  type E,\n} from "@nexo/wire";',
    ].join("\n");
    const seen = [...sample.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
    assert.deepEqual(seen, ["./a.js", "../b.js", "./c.js", "@nexo/wire"]);
    const loop = new Map([
      ["a", ["b"]],
      ["b", ["a"]],
      ["c", ["a"]],
    ]);
    assert.deepEqual(
      cycles(loop).map((c) => c.sort()),
      [["a", "b"]],
    );
  });
});

describe("dependencies between packages", () => {
  /** Which workspace packages each package's src may import. */
  const allowed: Record<string, string[]> = {
    wire: [],
    "mock-llm": [],
    sdk: ["@nexo/wire"],
    nexo: ["@nexo/wire", "@nexo/mock-llm"],
  };
  const workspace = ["@nexo/wire", "@nexo/mock-llm", "nexo-plugin-sdk", "nexo"];
  for (const [pkg, may] of Object.entries(allowed)) {
    it(`${pkg} imports only ${may.length === 0 ? "no other workspace package" : may.join(", ")}`, () => {
      const bad: string[] = [];
      for (const file of sourceFiles(join(PACKAGES, pkg, "src"))) {
        for (const spec of specifiers(file)) {
          const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
          if (workspace.includes(name) && !may.includes(name))
            bad.push(`${relative(PACKAGES, file)}: ${spec}`);
        }
      }
      assert.deepEqual(bad, []);
    });
  }

  it("has no import cycle inside wire, sdk or mock-llm", () => {
    for (const pkg of ["wire", "sdk", "mock-llm"]) {
      const src = join(PACKAGES, pkg, "src");
      const found = cycles(graph(sourceFiles(src))).map((c) => c.map((f) => relative(src, f)).join(" ⇄ "));
      assert.deepEqual(found, [], `${pkg}: import cycles:\n${found.join("\n")}`);
    }
  });
});
