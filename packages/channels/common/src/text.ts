/**
 * Cutting a long reply into the pieces a network accepts (Discord 2,000 characters a message,
 * Telegram 4,096): at a line break when one is in the second half of the window, else at a space,
 * else hard at the limit — so a paragraph or a word is split only when nothing better exists.
 * The limit counts UTF-16 code units, as those networks do; a cut never separates a surrogate pair.
 */
export function splitText(text: string, limit: number): string[] {
  if (!(limit >= 2)) throw new RangeError("splitText needs a limit of at least 2");
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let cut = window.lastIndexOf("\n");
    if (cut < limit / 2) cut = window.lastIndexOf(" ");
    if (cut < limit / 2) {
      cut = limit;
      const last = rest.charCodeAt(cut - 1);
      if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
    }
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest !== "") pieces.push(rest);
  return pieces;
}
