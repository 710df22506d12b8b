import { readFileSync } from "node:fs";

/** nexo's own version, from packages/nexo/package.json (works from src/ and from dist/). */
export const NEXO_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
