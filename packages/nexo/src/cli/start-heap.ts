/**
 * V8's young generation while `nexo start` boots. Start-up allocates mostly what lives as long as
 * the daemon (module code, schemas, the config, the registries), so nearly everything survives
 * each scavenge; V8 reads that as a reason to grow the young generation and doubles it, scavenge
 * after scavenge, to its 16 MB semi-spaces. Nothing shrinks it again while the daemon idles (a
 * full GC does not), so an idle daemon kept ~17 MB of resident young-generation pages that only
 * start-up had used. Holding the growth factor at 1 during start-up keeps the semi-spaces at their
 * initial size; the objects that survive are promoted as they would be anyway. Once the daemon is
 * ready the factor is V8's default again, so busy periods grow the young generation as before.
 *
 * The flag is read by V8 whenever it decides to grow; changing it at run time changes nothing else.
 * An operator who set the factor or the semi-space size on node's command line (or NODE_OPTIONS)
 * keeps their setting: nothing is held then.
 */
import { setFlagsFromString } from "node:v8";

/** V8's default (src/flags/flag-definitions.h in Node 20's V8). */
const DEFAULT_GROWTH_FACTOR = 2;
const OPERATOR_SETTING = /--(semi[-_]space[-_]growth[-_]factor|(max|min)[-_]semi[-_]space[-_]size)\b/;

/**
 * Holds the young generation at its current size until the returned function is called (once;
 * later calls do nothing).
 */
export function holdYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): () => void {
  if (execArgv.some((arg) => OPERATOR_SETTING.test(arg)) || OPERATOR_SETTING.test(nodeOptions ?? ""))
    return () => {};
  setFlagsFromString("--semi-space-growth-factor=1");
  let released = false;
  return () => {
    if (released) return;
    released = true;
    setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  };
}
