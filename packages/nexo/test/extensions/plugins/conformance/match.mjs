// Structural matching for the conformance scenarios, shared by the scripted child (plain Node) and
// the host-side runner (TypeScript, through match.d.mts). Plain JavaScript on purpose: a
// third-party SDK author can port it to any language, and the scenario files mean exactly what
// this function checks.
//
// An expected value matches an actual value when:
//   - an object: the actual is an object and every expected key matches (extra actual keys are fine);
//   - an array: same length, element by element;
//   - a primitive: strictly equal;
//   - a matcher (a non-empty object whose keys ALL begin with "$"): every operator holds.
// Operators: $any, $absent, $type, $regex, $gte, $gt, $lte, $lt, $exact, $contains, $length.
// A literal object whose keys begin with "$" is written inside {"$exact": ...}.

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** A bad scenario (an unknown operator, a misspelt type): the scenario is wrong, not the peer. */
export class MatcherError extends Error {
  constructor(message) {
    super(message);
    this.name = "MatcherError";
  }
}

/** Whether `value` is a matcher rather than a literal object. */
export function isMatcher(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith("$"));
}

/** Every way `actual` fails to match `expected`, as "path: problem" lines; empty when it matches. */
export function match(expected, actual, path = "$") {
  if (isMatcher(expected)) return matchOperators(expected, actual, path);
  if (actual === undefined) return [`${path}: missing, expected ${show(expected)}`];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${show(actual)}`];
    if (actual.length !== expected.length) {
      return [`${path}: expected ${expected.length} element(s), got ${actual.length}: ${show(actual)}`];
    }
    return expected.flatMap((item, index) => match(item, actual[index], `${path}[${index}]`));
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) {
      return [`${path}: expected an object, got ${show(actual)}`];
    }
    return Object.entries(expected).flatMap(([key, value]) => match(value, actual[key], `${path}.${key}`));
  }
  return Object.is(expected, actual) ? [] : [`${path}: expected ${show(expected)}, got ${show(actual)}`];
}

function matchOperators(matcher, actual, path) {
  const problems = [];
  for (const [operator, operand] of Object.entries(matcher)) {
    const problem = OPERATORS[operator];
    if (problem === undefined) throw new MatcherError(`${path}: unknown matcher operator ${operator}`);
    problems.push(...problem(operand, actual, path));
  }
  return problems;
}

const compare = (holds, word) => (operand, actual, path) =>
  typeof actual === "number" && holds(actual, operand)
    ? []
    : [`${path}: expected a number ${word} ${operand}, got ${show(actual)}`];

const OPERATORS = {
  $any: (_operand, actual, path) => (actual === undefined ? [`${path}: missing`] : []),
  $absent: (operand, actual, path) =>
    (actual === undefined) === (operand !== false) ? [] : [`${path}: expected absent, got ${show(actual)}`],
  $type: (operand, actual, path) => {
    const wanted = Array.isArray(operand) ? operand : [operand];
    for (const type of wanted) {
      if (!TYPES.has(type)) throw new MatcherError(`${path}: unknown $type "${type}"`);
    }
    return wanted.includes(typeOf(actual)) || (wanted.includes("number") && typeOf(actual) === "integer")
      ? []
      : [`${path}: expected type ${wanted.join("|")}, got ${show(actual)}`];
  },
  $regex: (operand, actual, path) =>
    typeof actual === "string" && new RegExp(operand).test(actual)
      ? []
      : [`${path}: expected a string matching /${operand}/, got ${show(actual)}`],
  $gte: compare((a, b) => a >= b, "≥"),
  $gt: compare((a, b) => a > b, ">"),
  $lte: compare((a, b) => a <= b, "≤"),
  $lt: compare((a, b) => a < b, "<"),
  $exact: (operand, actual, path) =>
    deepEqual(operand, actual) ? [] : [`${path}: expected exactly ${show(operand)}, got ${show(actual)}`],
  $contains: (operand, actual, path) => {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${show(actual)}`];
    return actual.some((item) => match(operand, item).length === 0)
      ? []
      : [`${path}: no element matches ${show(operand)} in ${show(actual)}`];
  },
  $length: (operand, actual, path) => {
    if (typeof actual !== "string" && !Array.isArray(actual)) {
      return [`${path}: expected a string or an array, got ${show(actual)}`];
    }
    return match(operand, actual.length, `${path}.length`);
  },
};

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
}

/** A value in a problem line: JSON, cut short. */
export function show(value) {
  if (value === undefined) return "(absent)";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
