/**
 * JSON Schema validation of tool arguments with ajv.
 *
 * Schemas come from everywhere (built-ins, MCP servers, plugins), so the dialect follows the
 * schema's `$schema`: draft 2020-12 and 2019-09 get their own ajv classes, anything else (or no
 * `$schema`) is treated as draft-07, the dialect most tool schemas are written in. Unknown keywords
 * and formats are tolerated (`strict: false`), but a schema that breaks its meta-schema is refused.
 *
 * When a schema is checked. A schema from outside (a plugin's at its handshake, an MCP server's) is
 * checked when it is registered by the structural rules below (`schemaShapeProblems`: every
 * keyword nexo's dialects define has the type its meta-schema gives it, every nested schema is a
 * schema, every `pattern` compiles), and a failure refuses it there as before. ajv compiles it,
 * the meta-schema check included, on its first validation — the tool's first call. What only ajv
 * sees (a `$ref` that resolves nowhere, a keyword's finer rules) therefore surfaces at that call:
 * the call is refused, never run, with an issue naming the schema's problem, and so is every later
 * call. `compileNow` does all of it at once (`nexo plugin check`, the built-ins' test). Why: ajv's
 * code and its compiled meta-schema were ~3.5 MB of an idle daemon's memory and ~0.1 s of its CPU
 * before ready (the quickstart's plugins advertise tools at every boot; issue 15, docs/performance.md).
 *
 * nexo's own (built-in) tool schemas are trusted: a test holds each against its meta-schema, so at
 * run time they skip that check, are compiled on their first call rather than at registration, and
 * once per process whatever the number of registries (every session builds one). Why: ajv's code
 * generation — above all compiling the meta-schema — was most of `nexo agent`'s CPU before `ready`.
 */
import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { Ajv2019 } from "ajv/dist/2019.js";
import type { Ajv2020 } from "ajv/dist/2020.js";
import type addFormatsModule from "ajv-formats";
import type { ToolArgumentIssue } from "./errors.js";

type AjvInstance = Ajv | Ajv2019 | Ajv2020;
type Dialect = "draft-07" | "2019-09" | "2020-12";
type AjvClass = new (options: Record<string, unknown>) => AjvInstance;

const load = createRequire(import.meta.url);
const ajvClasses = new Map<Dialect, AjvClass>();
let addFormats: typeof addFormatsModule.default | undefined;

/**
 * The ajv class of one dialect, loaded by the first schema of that dialect compiled (synchronously:
 * validation is). Not imported at the top, and each dialect's module on its own: a process that
 * has not validated anything holds none of ajv, and one that only met draft-07 schemas (nearly
 * every tool's) not the 2019-09 and 2020-12 vocabularies and meta-schemas.
 */
function ajvClass(dialect: Dialect): AjvClass {
  let loaded = ajvClasses.get(dialect);
  if (loaded === undefined) {
    loaded =
      dialect === "2020-12"
        ? (load("ajv/dist/2020") as typeof import("ajv/dist/2020.js")).Ajv2020
        : dialect === "2019-09"
          ? (load("ajv/dist/2019") as typeof import("ajv/dist/2019.js")).Ajv2019
          : (load("ajv") as typeof import("ajv")).Ajv;
    ajvClasses.set(dialect, loaded);
  }
  if (addFormats === undefined) {
    const formats = load("ajv-formats") as typeof addFormatsModule;
    // CommonJS: the module is the plugin function and also carries it as `default`.
    addFormats = formats.default ?? (formats as unknown as typeof addFormatsModule.default);
  }
  return loaded;
}

/** Every problem with `args`; an empty list when they are valid (the same frozen one every time). */
export type ArgumentValidator = (args: unknown) => readonly ToolArgumentIssue[];

/**
 * What a validator answers for valid arguments: one frozen empty list rather than a new array per
 * call (every tool call the engine runs, and every plugin call, is validated).
 */
export const NO_ISSUES: readonly ToolArgumentIssue[] = Object.freeze([]);

export interface CompiledSchema {
  /** Lists every problem with the arguments; nothing when they are valid. */
  validate: ArgumentValidator;
  /** Forgets the compiled schema (ajv caches it by object), so unregistered tools do not pile up. */
  release: () => void;
}

export class SchemaValidators {
  private readonly instances = new Map<Dialect, AjvInstance>();

  /**
   * Checks `schema`'s structure now and throws ("schema is invalid: …") when it is broken; ajv
   * compiles it on the first validation (the module's comment says why). Should ajv refuse it
   * then, that call and every later one get one issue naming the schema's problem, and no call
   * reaches the tool.
   */
  compile(schema: Record<string, unknown>): CompiledSchema {
    const dialect = dialectKey(schema.$schema);
    const problems = schemaShapeProblems(schema, dialect);
    if (problems.length > 0) throw new Error(`schema is invalid: ${problems.join("; ")}`);
    let compiled: ValidateFunction | undefined;
    let refused: ToolArgumentIssue[] | undefined;
    return {
      validate: (args) => {
        if (compiled === undefined) {
          if (refused !== undefined) return refused;
          try {
            compiled = this.compileChecked(dialect, schema);
          } catch (error) {
            refused = [
              {
                path: "",
                message: `cannot be checked: the tool's input schema is invalid (${(error as Error).message})`,
              },
            ];
            return refused;
          }
        }
        return issuesOf(compiled, args);
      },
      release: () => {
        if (compiled !== undefined) this.instances.get(dialect)?.removeSchema(schema);
      },
    };
  }

  /** `compile` with ajv's whole check (meta-schema, references) now: throws with ajv's reason. */
  compileNow(schema: Record<string, unknown>): CompiledSchema {
    const dialect = dialectKey(schema.$schema);
    const compiled = this.compileChecked(dialect, schema);
    return {
      validate: (args) => issuesOf(compiled, args),
      release: () => {
        this.instances.get(dialect)?.removeSchema(schema);
      },
    };
  }

  /**
   * The meta-schema check by the process's shared instance (which compiles each dialect's
   * meta-schema once, not once per plugin handshake and per registry), then the compile by this
   * set's own instance. Throws with ajv's reason.
   */
  private compileChecked(dialect: Dialect, schema: Record<string, unknown>): ValidateFunction {
    sharedInstance(dialect).validateSchema(schema, true);
    return instanceIn(this.instances, dialect).compile(schema);
  }
}

/** Trusted schemas' validators, by dialect and schema text: built-in schemas are few and fixed. */
const trustedValidators = new Map<string, ValidateFunction>();
/**
 * One instance per dialect for the process: it compiles the trusted schemas and checks every
 * other schema against its meta-schema.
 */
const sharedInstances = new Map<Dialect, AjvInstance>();

function sharedInstance(dialect: Dialect): AjvInstance {
  return instanceIn(sharedInstances, dialect);
}

/** The dialect's instance in `instances`, made on first need. */
function instanceIn(instances: Map<Dialect, AjvInstance>, dialect: Dialect): AjvInstance {
  let ajv = instances.get(dialect);
  if (ajv === undefined) {
    ajv = createAjv(dialect);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/** Every problem ajv found with `args`; nothing when they are valid. */
function issuesOf(compiled: ValidateFunction, args: unknown): readonly ToolArgumentIssue[] {
  return compiled(args) ? NO_ISSUES : (compiled.errors ?? []).map(toIssue);
}

/**
 * A validator for one of nexo's own schemas, compiled when first called and shared by every
 * registry of the process. The schema is not checked against its meta-schema here (a test does).
 */
export function trustedValidator(schema: Record<string, unknown>): ArgumentValidator {
  let compiled: ValidateFunction | undefined;
  return (args) => {
    if (compiled === undefined) {
      const key = dialectKey(schema.$schema);
      const text = `${key}\n${JSON.stringify(schema)}`;
      compiled = trustedValidators.get(text);
      if (compiled === undefined) {
        compiled = sharedInstance(key).compile(schema);
        trustedValidators.set(text, compiled);
      }
    }
    return issuesOf(compiled, args);
  };
}

/** No instance checks schemas as it compiles them: `compileChecked` asks the shared one first. */
function createAjv(dialect: Dialect): AjvInstance {
  const AjvOfDialect = ajvClass(dialect);
  const ajv = new AjvOfDialect({ strict: false, allErrors: true, logger: false, validateSchema: false });
  addFormats?.(ajv as Ajv);
  return ajv;
}

function dialectKey(dialect: unknown): Dialect {
  if (typeof dialect !== "string") return "draft-07";
  if (dialect.includes("2020-12")) return "2020-12";
  if (dialect.includes("2019-09")) return "2019-09";
  if (dialect.includes("draft-04") || dialect.includes("draft-03")) {
    throw new Error(`unsupported JSON Schema dialect ${dialect} (use draft-07, 2019-09 or 2020-12)`);
  }
  return "draft-07";
}

/** ajv's error as a field-level issue: the offending field's pointer and what is wrong with it. */
function toIssue(error: ErrorObject): ToolArgumentIssue {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return { path: `${error.instancePath}/${escapePointer(params.missingProperty)}`, message: "is required" };
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return {
      path: `${error.instancePath}/${escapePointer(params.additionalProperty)}`,
      message: "is not an allowed property",
    };
  }
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    return {
      path: error.instancePath,
      message: `must be one of ${params.allowedValues.map((value) => JSON.stringify(value)).join(", ")}`,
    };
  }
  return { path: error.instancePath, message: error.message ?? `fails "${error.keyword}"` };
}

function escapePointer(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

const JSON_TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
/**
 * The keywords checked, by what their value must be, and the dialects whose meta-schema gives them
 * that rule: a keyword its dialect does not define is ignored by ajv (`strict: false`), so it is
 * not checked here either.
 */
const ALL: readonly Dialect[] = ["draft-07", "2019-09", "2020-12"];
const SINCE_2019: readonly Dialect[] = ["2019-09", "2020-12"];
const BEFORE_2020: readonly Dialect[] = ["draft-07", "2019-09"];
/** Keywords whose value is one schema (`items` is also an array of them before 2020-12). */
const SCHEMA_KEYWORDS: ReadonlyArray<[string, readonly Dialect[]]> = [
  ["additionalItems", BEFORE_2020],
  ["additionalProperties", ALL],
  ["contains", ALL],
  ["else", ALL],
  ["if", ALL],
  ["items", ALL],
  ["not", ALL],
  ["propertyNames", ALL],
  ["then", ALL],
  ["unevaluatedItems", SINCE_2019],
  ["unevaluatedProperties", SINCE_2019],
];
/** Keywords whose value is a non-empty array of schemas. */
const SCHEMA_LIST_KEYWORDS: ReadonlyArray<[string, readonly Dialect[]]> = [
  ["allOf", ALL],
  ["anyOf", ALL],
  ["oneOf", ALL],
  ["prefixItems", ["2020-12"]],
];
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS: ReadonlyArray<[string, readonly Dialect[]]> = [
  ["$defs", SINCE_2019],
  ["definitions", ALL],
  ["dependentSchemas", SINCE_2019],
  ["patternProperties", ALL],
  ["properties", ALL],
];
const COUNT_KEYWORDS: ReadonlyArray<[string, readonly Dialect[]]> = [
  ["maxContains", SINCE_2019],
  ["maxItems", ALL],
  ["maxLength", ALL],
  ["maxProperties", ALL],
  ["minContains", SINCE_2019],
  ["minItems", ALL],
  ["minLength", ALL],
  ["minProperties", ALL],
];
const NUMBER_KEYWORDS = ["exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum"];
const STRING_KEYWORDS = [
  "$id",
  "$ref",
  "$schema",
  "contentEncoding",
  "contentMediaType",
  "description",
  "format",
  "title",
];
/** More than this many problems are not listed one by one. */
const MAX_SHAPE_PROBLEMS = 5;

/**
 * What a meta-schema of nexo's dialects would refuse in `schema`'s structure, as `pointer what`
 * lines (none when it looks right): keyword values of the wrong type, nested schemas that are not
 * schemas, `type` names that do not exist, `pattern`s that do not compile as ajv compiles them
 * (with the `u` flag). Not every rule of the meta-schemas — ajv applies those on first use — but the
 * mistakes a schema written by hand or generated from types actually has, without loading ajv.
 */
export function schemaShapeProblems(schema: unknown, dialect: Dialect): string[] {
  const problems: string[] = [];
  const report = (pointer: string, what: string) => {
    if (problems.length < MAX_SHAPE_PROBLEMS) problems.push(`${pointer || "/"} ${what}`);
  };
  const visit = (node: unknown, pointer: string): void => {
    if (typeof node === "boolean") return;
    if (!isPlainObject(node)) {
      report(pointer, "must be a schema (an object or a boolean)");
      return;
    }
    const at = (keyword: string) => `${pointer}/${escapePointer(keyword)}`;
    const type = node.type;
    if (type !== undefined) {
      const names = Array.isArray(type) ? type : [type];
      if (names.length === 0 || names.some((name) => typeof name !== "string" || !JSON_TYPES.has(name)))
        report(at("type"), `must be one of ${[...JSON_TYPES].join(", ")}, or an array of them`);
      else if (new Set(names).size !== names.length) report(at("type"), "must not repeat a type");
    }
    for (const [keyword, dialects] of SCHEMA_KEYWORDS) {
      const value = node[keyword];
      if (value === undefined || !dialects.includes(dialect)) continue;
      if (keyword === "items" && dialect !== "2020-12" && Array.isArray(value))
        for (const [index, item] of value.entries()) visit(item, `${at(keyword)}/${index}`);
      else visit(value, at(keyword));
    }
    for (const [keyword, dialects] of SCHEMA_LIST_KEYWORDS) {
      const value = node[keyword];
      if (value === undefined || !dialects.includes(dialect)) continue;
      if (!Array.isArray(value) || value.length === 0)
        report(at(keyword), "must be a non-empty array of schemas");
      else for (const [index, item] of value.entries()) visit(item, `${at(keyword)}/${index}`);
    }
    for (const [keyword, dialects] of SCHEMA_MAP_KEYWORDS) {
      const value = node[keyword];
      if (value === undefined || !dialects.includes(dialect)) continue;
      if (!isPlainObject(value)) {
        report(at(keyword), "must be an object of schemas");
        continue;
      }
      for (const [name, item] of Object.entries(value)) visit(item, `${at(keyword)}/${escapePointer(name)}`);
    }
    for (const [keyword, dialects] of COUNT_KEYWORDS) {
      const value = node[keyword];
      if (
        value !== undefined &&
        dialects.includes(dialect) &&
        !(Number.isInteger(value) && (value as number) >= 0)
      )
        report(at(keyword), "must be a non-negative integer");
    }
    for (const keyword of NUMBER_KEYWORDS) {
      const value = node[keyword];
      if (value !== undefined && typeof value !== "number") report(at(keyword), "must be a number");
    }
    if (node.multipleOf !== undefined && !(typeof node.multipleOf === "number" && node.multipleOf > 0))
      report(at("multipleOf"), "must be a number greater than 0");
    for (const keyword of STRING_KEYWORDS) {
      const value = node[keyword];
      if (value !== undefined && typeof value !== "string") report(at(keyword), "must be a string");
    }
    if (node.pattern !== undefined && !(typeof node.pattern === "string" && compilesAsPattern(node.pattern)))
      report(at("pattern"), "must be a valid regular expression");
    if (node.uniqueItems !== undefined && typeof node.uniqueItems !== "boolean")
      report(at("uniqueItems"), "must be a boolean");
    if (node.enum !== undefined && !Array.isArray(node.enum)) report(at("enum"), "must be an array");
    if (node.required !== undefined && !isNameList(node.required))
      report(at("required"), "must be an array of distinct property names");
    if (node.dependentRequired !== undefined && dialect !== "draft-07") {
      if (!isPlainObject(node.dependentRequired) || !Object.values(node.dependentRequired).every(isNameList))
        report(at("dependentRequired"), "must map property names to arrays of distinct property names");
    }
    if (node.dependencies !== undefined) {
      if (!isPlainObject(node.dependencies)) report(at("dependencies"), "must be an object");
      else
        for (const [name, item] of Object.entries(node.dependencies))
          if (!Array.isArray(item)) visit(item, `${at("dependencies")}/${escapePointer(name)}`);
          else if (!isNameList(item))
            report(
              `${at("dependencies")}/${escapePointer(name)}`,
              "must be an array of distinct property names",
            );
    }
  };
  visit(schema, "");
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNameList(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every((name) => typeof name === "string") &&
    new Set(value).size === value.length
  );
}

/** ajv compiles `pattern` with the `u` flag (its `unicodeRegExp` default). */
function compilesAsPattern(source: string): boolean {
  try {
    new RegExp(source, "u");
    return true;
  } catch {
    return false;
  }
}
