/**
 * What a shell command line runs, as far as an approval needs to know. A *plain* invocation is one
 * simple command made of words, quoted or not, with no operators (`;`, `&&`, `|`, `&`),
 * redirections, substitutions, expansions, escapes, comments or leading variable assignments — so
 * the program its first word names is the only one it can start. Everything else is not plain,
 * which is the safe answer: an "always" given for `echo hi` must not let `echo hi; rm -rf ~` run.
 */

/** Characters that make a line more than one plain invocation when they appear outside quotes. */
const OPERATORS = new Set([";", "&", "|", "<", ">", "(", ")", "$", "`", "\\", "#", "\n", "\r"]);

/**
 * Programs whose real work is the command in their arguments (`env X=1 rm …`, `sudo …`, `bash -c
 * …`, `xargs …`): granting them would grant anything, so they are never granted as programs.
 */
export const LAUNCHERS: ReadonlySet<string> = new Set([
  "bash",
  "sh",
  "zsh",
  "dash",
  "ksh",
  "fish",
  "env",
  "sudo",
  "doas",
  "su",
  "xargs",
  "nohup",
  "nice",
  "ionice",
  "timeout",
  "time",
  "exec",
  "eval",
  "command",
  "builtin",
  "watch",
  "strace",
  "setsid",
  "chroot",
  "ssh",
]);

/** The words of `line` with quotes removed, or undefined when it is not one plain invocation. */
export function plainWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (const ch of line) {
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "$" || ch === "`" || ch === "\\") return undefined;
      else word += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      word ??= "";
      continue;
    }
    if (ch === " " || ch === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
      continue;
    }
    if (OPERATORS.has(ch)) return undefined;
    word = (word ?? "") + ch;
  }
  if (quote !== undefined) return undefined;
  if (word !== undefined) words.push(word);
  return words.length > 0 ? words : undefined;
}

/**
 * The program a plain invocation starts (its first word), or undefined when the line is not plain
 * or starts with a variable assignment (`LD_PRELOAD=… ls` runs more than `ls`).
 */
export function plainProgram(line: string): string | undefined {
  const first = plainWords(line)?.[0];
  if (first === undefined || first === "" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) return undefined;
  return first;
}
