/**
 * The work behind `nexo init`: choose the provider (asked on a terminal with @clack/prompts, else
 * from the flags and the environment), write the files of scaffold/config-dir.ts, store a typed-in
 * API key as a secret of the state dir (0600, never in a config file), and check the result with
 * the loader `nexo start` uses.
 *
 * Exit status: 0 written and valid; 1 refused (files exist without --force, cancelled, or the
 * written directory does not validate — a bug worth reporting); 2 usage.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { writeSecretFile } from "../config/secret-files.js";
import { inspectDaemonConfig } from "../daemon/config/index.js";
import { formatWarning } from "../daemon/config/report.js";
import { INIT_PROVIDERS, type InitProvider } from "../scaffold/choices.js";
import { configFiles, DEFAULT_MODEL, type InitAnswers, KEY_VARIABLE } from "../scaffold/config-dir.js";

export interface InitFlags {
  yes?: boolean;
  provider?: InitProvider;
  model?: string;
  force?: boolean;
}

const CANCELLED = Symbol("cancelled");

export async function runInit(target: string, flags: InitFlags, env: NodeJS.ProcessEnv): Promise<number> {
  const dir = resolve(target);
  const interactive = !flags.yes && process.stdin.isTTY === true && process.stdout.isTTY === true;
  const answers = interactive ? await ask(flags, env) : { ...defaults(flags, env), key: undefined };
  if (answers === CANCELLED) {
    process.stderr.write("nexo init: cancelled, nothing was written\n");
    return 1;
  }

  const files = configFiles(answers);
  const existing = Object.keys(files).filter((name) => existsSync(join(dir, name)));
  if (existing.length > 0 && !flags.force) {
    process.stderr.write(
      `nexo init: ${dir} already has ${existing.join(", ")}; nothing was written (--force overwrites them)\n`,
    );
    return 1;
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const variable = KEY_VARIABLE[answers.provider];
  if (answers.key !== undefined && variable !== undefined) {
    await writeSecretFile(join(dir, "state"), variable, answers.key);
  }

  const report = await inspectDaemonConfig(dir, { env });
  if (report.issues.length > 0) {
    process.stderr.write(`nexo init: the written config does not validate (please report this):\n`);
    for (const issue of report.issues) process.stderr.write(`  ${issue.message}\n`);
    return 1;
  }
  const near = relative(process.cwd(), dir);
  const shown = near === "" ? "." : near.startsWith("..") ? dir : near;
  const lines = [
    `wrote ${shown}: agents.yaml, llm.yaml, daemon.yaml, plugins.yaml (provider ${answers.provider}, model ${answers.model})`,
    ...(answers.key !== undefined
      ? [`stored the API key as secret ${variable} in ${join(shown, "state")} (mode 0600)`]
      : []),
    ...report.warnings.map(formatWarning),
    "next:",
    `  nexo chat --config ${shown}     talk to the assistant`,
    `  nexo start --config ${shown}    run it as a daemon (channels, plugins)`,
    `  nexo plugin new my-tools --dir ${join(shown, "plugins")}    write your own tool plugin`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** --yes, or no terminal: the flags, else the vendor whose key is set, else the offline model. */
function defaults(flags: InitFlags, env: NodeJS.ProcessEnv): InitAnswers {
  const provider =
    flags.provider ?? (env.ANTHROPIC_API_KEY ? "anthropic" : env.OPENAI_API_KEY ? "openai" : "scripted");
  return { provider, model: flags.model ?? DEFAULT_MODEL[provider] };
}

const LABELS: Record<InitProvider, string> = {
  anthropic: "Anthropic (Claude)",
  openai: "OpenAI",
  ollama: "Ollama on this machine (no key)",
  scripted: "the offline demo model (no key, no network)",
};

async function ask(
  flags: InitFlags,
  env: NodeJS.ProcessEnv,
): Promise<(InitAnswers & { key: string | undefined }) | typeof CANCELLED> {
  const prompts = await import("@clack/prompts");
  const suggested = defaults(flags, env);
  prompts.intro("nexo init");
  const provider =
    flags.provider ??
    (await prompts.select<InitProvider>({
      message: "Which model provider?",
      initialValue: suggested.provider,
      options: INIT_PROVIDERS.map((value) => ({ value, label: LABELS[value] })),
    }));
  if (prompts.isCancel(provider)) return CANCELLED;
  const model =
    flags.model ??
    (await prompts.text({
      message: "Which model?",
      initialValue: DEFAULT_MODEL[provider],
      validate: (value) => (value.trim() === "" ? "a model id is needed" : undefined),
    }));
  if (prompts.isCancel(model)) return CANCELLED;
  let key: string | undefined;
  const variable = KEY_VARIABLE[provider];
  if (variable !== undefined && !env[variable]) {
    const typed = await prompts.password({
      message: `API key (stored as a secret of the state dir, mode 0600; leave empty to set ${variable} yourself)`,
    });
    if (prompts.isCancel(typed)) return CANCELLED;
    key = typed.trim() || undefined;
  }
  prompts.outro("writing the config");
  return { provider, model: model.trim(), key };
}
