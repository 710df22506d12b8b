/** The wire benchmark's request parameters, shared by the rate rows and the CPU harness. */

/**
 * 64 KiB of what a tool result usually carries: source text with quotes, backslashes, newlines,
 * tabs and a little non-ASCII. The "x" payload beside it is what base64 and minified text look
 * like to the encoder (no character to escape), which the peer writes without JSON.stringify's
 * per-character pass (packages/wire/src/long-strings.ts); this one takes the ordinary path.
 */
export function sourceText(chars: number): string {
  const lines = [
    'import { readFile } from "node:fs/promises";',
    "// Café menu — prices in €, one per line",
    "export async function load(path: string): Promise<Map<string, number>> {",
    '\tconst text = await readFile(path, "utf8");',
    '\tconst rows = text.split("\\n").filter((row) => row.trim() !== "");',
    "\treturn new Map(rows.map((row) => {",
    '\t\tconst [name, price] = row.split("\\t");',
    '\t\treturn [name ?? "", Number.parseFloat(price ?? "0")];',
    "\t}));",
    "}",
    "",
  ];
  let text = "";
  while (text.length < chars) text += `${lines.join("\n")}\n`;
  return text.slice(0, chars);
}

export const payloads = {
  small: { text: "hello", n: 1 },
  "4KiB": { text: "x".repeat(4 * 1024) },
  "64KiB": { text: "x".repeat(64 * 1024) },
  "64KiB text": { text: sourceText(64 * 1024) },
};
