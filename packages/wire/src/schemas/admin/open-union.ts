/**
 * A discriminated union that stays open: objects whose discriminator names a known variant must
 * match that variant, objects with any other discriminator value pass through untouched. The spec
 * marks these enums `#[non_exhaustive]` and promises new variants land without a breaking change,
 * so a reader built today must not reject tomorrow's variant.
 *
 * A plain `z.union([known, fallback])` would accept the shape but report a failing known variant
 * as an opaque union error; validating through the matched variant keeps precise issue paths.
 */
import { z } from "zod";

export function openDiscriminatedUnion<
  const Key extends string,
  const Options extends readonly [z.ZodObject, ...z.ZodObject[]],
>(key: Key, options: Options) {
  const known = new Map<unknown, z.ZodObject>();
  for (const option of options) {
    const values = option.shape[key]?._zod.values;
    if (!values) throw new Error(`open union option lacks a literal "${key}"`);
    for (const value of values) known.set(value, option);
  }
  const base = z.looseObject({ [key]: z.string().min(1) } as Record<Key, z.ZodString>);
  type Known = z.output<Options[number]>;
  type Unknown = z.output<typeof base>;
  return base.transform((value, ctx): Known | Unknown => {
    const variant = known.get(value[key]);
    if (!variant) return value;
    const parsed = variant.safeParse(value);
    if (parsed.success) return parsed.data as Known;
    // The variant's issues are already final (message and relative path set); re-raising them
    // as-is keeps their codes, and zod prefixes our position in the document to their paths.
    for (const issue of parsed.error.issues) ctx.issues.push(issue as z.core.$ZodRawIssue);
    return z.NEVER;
  });
}
