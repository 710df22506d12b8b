/**
 * "Did you mean" for tool names: models misspell names, change their case, or drop a namespace
 * prefix (`read_file` for `mcp__fs__read_file`).
 */

const MAX_SUGGESTIONS = 3;

/** Up to three known names close to `wanted`, closest first. */
export function closeNames(wanted: string, known: Iterable<string>): string[] {
  const target = wanted.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  for (const name of known) {
    const candidate = name.toLowerCase();
    let score: number;
    if (candidate === target) score = 0;
    else if (target.length >= 3 && (candidate.includes(target) || target.includes(candidate))) score = 1;
    else {
      const distance = editDistance(target, candidate);
      // Allow about one typo per three characters, at least two.
      if (distance > Math.max(2, Math.floor(Math.max(target.length, candidate.length) / 3))) continue;
      score = 1 + distance;
    }
    scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, MAX_SUGGESTIONS).map((entry) => entry.name);
}

/** Levenshtein distance with a single rolling row. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      const substitution = diagonal + (a[i - 1] === b[j - 1] ? 0 : 1);
      row[j] = Math.min(above + 1, row[j - 1]! + 1, substitution);
      diagonal = above;
    }
  }
  return row[b.length]!;
}
