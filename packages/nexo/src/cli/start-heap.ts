/**
 * V8's young generation while `nexo start` boots. Start-up allocates mostly what lives as long as
 * the daemon (module code, schemas, the config, the registries), so nearly everything survives
 * each scavenge; V8 reads that as a reason to grow the young generation and doubles it, scavenge
 * after scavenge, to its 16 MB semi-spaces. Nothing shrinks it again while the daemon idles (a
 * full GC does not), so an idle daemon kept ~17 MB of resident young-generation pages that only
 * start-up had used. Holding the growth factor at 1 during start-up keeps the semi-spaces at their
 * initial size; the objects that survive are promoted as they would be anyway. Once the daemon is
 * ready, growth is allowed again in one step: the first busy period takes the young generation
 * straight to its maximum, where the unheld boot had left it (with V8's default factor of 2 it
 * went there 1 → 2 → 4 → 8 → 16 MB, and the first burst of 300 sessions cost ~10% more daemon
 * CPU per session in bench/daemon.bench.ts; in one step it is within the run-to-run noise).
 *
 * The flag is read by V8 whenever it decides to grow; changing it at run time changes nothing else.
 * An operator who set the factor or the semi-space size on node's command line (or NODE_OPTIONS)
 * keeps their setting: nothing is held then.
 *
 * Baseline code is held back the same way ({@link holdBaselineCompilation}): what only start-up
 * runs is never compiled past bytecode.
 */
import { setFlagsFromString } from "node:v8";

/**
 * V8 multiplies the semi-space by this when it grows it, up to the maximum: 16 grows the initial
 * 1 MB semi-space to the 16 MB maximum of a 64-bit heap at once (V8's default factor is 2).
 */
const READY_GROWTH_FACTOR = 16;
const OPERATOR_SETTING = /--(semi[-_]space[-_]growth[-_]factor|(max|min)[-_]semi[-_]space[-_]size)\b/;

/**
 * Holds the young generation at its current size until the returned function is called (once;
 * later calls do nothing), which lets it grow again.
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
    setFlagsFromString(`--semi-space-growth-factor=${READY_GROWTH_FACTOR}`);
  };
}

const OPERATOR_SPARKPLUG = /--(no-)?(sparkplug|always[-_]sparkplug|jitless|lite[-_]mode)\b/;

/**
 * V8's baseline compiler (Sparkplug) while `nexo start` boots. V8 compiles a function that has run
 * a while to baseline machine code and keeps that code in the code space, and start-up runs much
 * code often enough for it (parsing the config files, building their schemas, the plugin
 * handshakes) that an idle daemon never runs again: the quickstart daemon held ~0.5 MB of such code
 * at idle (docs/performance.md, "The daemon"). Compiling none during start-up costs it nothing
 * measurable (its CPU to ready was unchanged); once the daemon is ready the compiler is on again,
 * so what a busy period runs tiers up as before. The optimizing compiler is never held.
 *
 * `--sparkplug` is read by V8 each time it decides to tier a function up; changing it at run time
 * changes nothing else. An operator who chose the baseline compiler's setting (or no JIT at all)
 * on node's command line keeps it: nothing is held then.
 */
export function holdBaselineCompilation(execArgv: readonly string[] = process.execArgv): () => void {
  if (execArgv.some((arg) => OPERATOR_SPARKPLUG.test(arg))) return () => {};
  setFlagsFromString("--no-sparkplug");
  let released = false;
  return () => {
    if (released) return;
    released = true;
    setFlagsFromString("--sparkplug");
  };
}
