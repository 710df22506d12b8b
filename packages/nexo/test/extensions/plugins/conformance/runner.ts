/**
 * Plays one conformance scenario against the real host: builds its environment, runs the host
 * actions, stops everything, then checks that the scripted child played its whole script. A
 * failure message carries the child's report, the host's state and its log, since a scenario
 * failure is usually best understood from the other side.
 */
import { HostScript } from "./actions.js";
import { childProblems, describeReport, readChildReport } from "./child-report.js";
import { ScenarioEnvironment } from "./environment.js";
import { show } from "./match.mjs";
import { observe } from "./observe.js";
import { loadScenario } from "./scenario.js";

export async function runScenario(file: string): Promise<void> {
  const scenario = loadScenario(file);
  const env = new ScenarioEnvironment(scenario, file);
  let failure: unknown;
  let context = "";
  try {
    await new HostScript(env).run(scenario.host);
  } catch (error) {
    failure = error;
    context = diagnostics(env);
  }
  try {
    await env.manager.stop("scenario over");
  } catch (error) {
    failure ??= error;
  }
  const report = readChildReport(env.reportPath);
  await env.dispose();
  if (failure !== undefined) {
    const message = failure instanceof Error ? failure.message : String(failure);
    throw new Error(`${message}\n--- child report ---\n${describeReport(report)}\n${context}`, {
      cause: failure,
    });
  }
  const problems = childProblems(report);
  if (problems.length > 0) {
    throw new Error(
      `the scripted child did not play its script:\n  ${problems.join("\n  ")}\n--- child report ---\n${describeReport(report)}`,
    );
  }
}

function diagnostics(env: ScenarioEnvironment): string {
  const state = observe(env);
  const log = env.logs
    .slice(-30)
    .map((entry) => `${entry.level}: ${entry.message ?? ""} ${show(entry.fields)}`)
    .join("\n");
  return `--- host state ---\n${show({ ...state, published: state.published.length })}\n--- host log (last 30) ---\n${log}`;
}
