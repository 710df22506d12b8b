/**
 * A value a child process will receive as text (an environment variable, a command-line argument),
 * written in YAML or TOML where `PORT: 8080` reads as a number and `DEBUG: true` as a boolean.
 * Both become their text. An integer beyond 2^53 — a Discord or Telegram id written without
 * quotes — has already lost its last digits when the parser hands it over, so it is refused with
 * the fix rather than passed on wrong.
 */
import { z } from "zod";

export const ScalarTextSchema = z
  .union([z.string(), z.number(), z.boolean()])
  .superRefine((value, ctx) => {
    if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value))
      ctx.addIssue({
        code: "custom",
        message: `${value} is too long a number for YAML to keep exact (an id?): write it in quotes`,
      });
  })
  .transform((value) => String(value));
