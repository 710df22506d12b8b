/**
 * Names of the writer's temp files: `.<target name>.tmp-<pid>-<random hex>`, next to the target.
 *
 * The leading dot and the suffix after the real extension mean a temp file is never picked up as
 * config (`agents.yaml` → `.agents.yaml.tmp-4242-9f3c1a2b`), and the pid says which process left
 * it behind if that process was killed mid-write.
 */
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";

const TEMP_NAME = /^\..+\.tmp-\d+-[0-9a-f]+$/;

/** A fresh temp path in the same directory as `target` (so the final rename stays on one filesystem). */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
}

/** Whether a file name (not a path) has the shape of one of the writer's temp files. */
export function isTempFileName(name: string): boolean {
  return TEMP_NAME.test(name);
}
