/**
 * docs/cli.md, generated from the commander definitions themselves so it cannot drift from what
 * `nexo --help` says: every command and subcommand with its usage, arguments, options (choices and
 * defaults included) and the exit codes all commands share. `node scripts/cli-docs.mjs` writes it;
 * a test fails when the file is stale.
 */
import type { Argument, Command, Option } from "commander";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "./exit-codes.js";

const cell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

function path(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

function optionRow(option: Option): string {
  const notes: string[] = [];
  if (option.argChoices !== undefined)
    notes.push(`one of: ${option.argChoices.map((c) => `\`${c}\``).join(", ")}`);
  if (option.defaultValue !== undefined && option.defaultValue !== false) {
    notes.push(`default: \`${String(option.defaultValue)}\``);
  }
  const description = [option.description, ...notes].filter(Boolean).join("; ");
  return `| \`${cell(option.flags)}\` | ${cell(description)} |`;
}

function argumentRow(argument: Argument): string {
  const shown = argument.required ? `<${argument.name()}>` : `[${argument.name()}]`;
  const defaults =
    argument.defaultValue === undefined ? "" : `; default: \`${String(argument.defaultValue)}\``;
  return `| \`${shown}\` | ${cell(`${argument.description}${defaults}`)} |`;
}

function section(command: Command, out: string[]): void {
  const visible = command.commands.filter((sub) => !(sub as unknown as { _hidden?: boolean })._hidden);
  if (command.parent !== null) {
    out.push(`## \`${path(command)}\``, "", command.description(), "");
    out.push("```text", `${path(command)} ${command.usage()}`, "```", "");
    const args = command.registeredArguments;
    if (args.length > 0) out.push("| argument | meaning |", "| --- | --- |", ...args.map(argumentRow), "");
    const options = command.options.filter((o) => !o.hidden);
    if (options.length > 0) out.push("| option | meaning |", "| --- | --- |", ...options.map(optionRow), "");
    if (visible.length > 0) {
      out.push(`Subcommands: ${visible.map((sub) => `\`${sub.name()}\``).join(", ")}.`, "");
    }
  }
  for (const sub of visible) section(sub, out);
}

export function renderCliReference(program: Command): string {
  const out: string[] = [
    "# The `nexo` command line",
    "",
    "<!-- Generated from the CLI's own definitions by `node scripts/cli-docs.mjs`; do not edit by hand. -->",
    "",
    program.description(),
    "",
    "```text",
    `${program.name()} ${program.usage()}`,
    "```",
    "",
    "Options of `nexo` itself (given before the command):",
    "",
    "| option | meaning |",
    "| --- | --- |",
    ...program.options.filter((o) => !o.hidden).map(optionRow),
    "| `-h, --help` | show the help of `nexo` or of any command (`nexo chat --help`) |",
    "",
    "## Exit status",
    "",
    "Every command uses the same codes, so a script can tell a mistake in the call from a failure:",
    "",
    "| code | meaning |",
    "| --- | --- |",
    `| ${EXIT_OK} | success (also for \`--help\` and \`--version\`) |`,
    `| ${EXIT_FAILURE} | the command ran and failed: a check failed, a daemon could not start or stopped on an error, a call was refused, a server went away |`,
    `| ${EXIT_USAGE} | the command was called wrong (unknown command or option, missing argument, bad value) or the config directory is invalid; nothing was started |`,
    "",
    "Logs go to stderr (pretty on a terminal, JSON lines otherwise; `--log-format`), results to stdout.",
    "",
  ];
  section(program, out);
  return `${out.join("\n").trimEnd()}\n`;
}
