/**
 * `demo_dice`: rolls N dice of S sides. With a `seed` the roll is reproducible (the same seed
 * gives the same faces everywhere); without one it uses the operating system's randomness.
 */
import { randomInt as secureRandomInt } from "node:crypto";
import { type ToolDef, textResult } from "nexo-plugin-sdk";
import { ArgumentReader } from "./args.js";
import { randomInt, seededRandom } from "./random.js";

export const MAX_DICE = 100;
export const MAX_SIDES = 1000;
const MAX_SEED = 0xffffffff;

export const diceTool: ToolDef = {
  name: "demo_dice",
  description: "Roll dice. Give `seed` for a reproducible roll (the same seed always gives the same faces).",
  inputSchema: {
    type: "object",
    properties: {
      count: { type: "integer", minimum: 1, maximum: MAX_DICE, default: 1, description: "Number of dice" },
      sides: { type: "integer", minimum: 2, maximum: MAX_SIDES, default: 6, description: "Faces per die" },
      seed: { type: "integer", minimum: 0, maximum: MAX_SEED, description: "Seed for a repeatable roll" },
    },
    additionalProperties: false,
  },
};

/** The faces of `count` dice of `sides` sides; seeded when `seed` is given. */
export function rollDice(count: number, sides: number, seed?: number): number[] {
  if (seed === undefined) return Array.from({ length: count }, () => secureRandomInt(1, sides + 1));
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => randomInt(random, 1, sides));
}

export function runDice(args: unknown) {
  const reader = new ArgumentReader("demo_dice", args, ["count", "sides", "seed"]);
  const count = reader.integer("count", { min: 1, max: MAX_DICE, fallback: 1 });
  const sides = reader.integer("sides", { min: 2, max: MAX_SIDES, fallback: 6 });
  const seed = reader.optionalInteger("seed", { min: 0, max: MAX_SEED });
  reader.finish();

  const faces = rollDice(count, sides, seed);
  const total = faces.reduce((sum, face) => sum + face, 0);
  const how = seed === undefined ? "" : ` (seed ${seed})`;
  return textResult(`Rolled ${count}d${sides}${how}: ${faces.join(", ")} (total ${total})`);
}
