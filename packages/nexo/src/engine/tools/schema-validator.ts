/**
 * JSON Schema validation of tool arguments with ajv.
 *
 * Schemas come from everywhere (built-ins, MCP servers, plugins), so the dialect follows the
 * schema's `$schema`: draft 2020-12 and 2019-09 get their own ajv classes, anything else (or no
 * `$schema`) is treated as draft-07, the dialect most tool schemas are written in. Unknown keywords
 * and formats are tolerated (`strict: false`), but a schema that breaks its meta-schema is refused.
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

interface AjvLibrary {
  Ajv: typeof Ajv;
  Ajv2019: typeof Ajv2019;
  Ajv2020: typeof Ajv2020;
  addFormats: typeof addFormatsModule.default;
}

let library: AjvLibrary | undefined;

/**
 * ajv, loaded by the first schema compiled (synchronously: registration and validation are). Not
 * imported at the top: with the built-in schemas compiled on first call, a session that has not
 * used a tool yet — `nexo agent` until its first tool call — never needs ajv's 300 KB.
 */
function ajvLibrary(): AjvLibrary {
  if (library === undefined) {
    const load = createRequire(import.meta.url);
    const formats = load("ajv-formats") as typeof addFormatsModule;
    library = {
      Ajv: (load("ajv") as typeof import("ajv")).Ajv,
      Ajv2019: (load("ajv/dist/2019") as typeof import("ajv/dist/2019.js")).Ajv2019,
      Ajv2020: (load("ajv/dist/2020") as typeof import("ajv/dist/2020.js")).Ajv2020,
      // CommonJS: the module is the plugin function and also carries it as `default`.
      addFormats: formats.default ?? (formats as unknown as typeof addFormatsModule.default),
    };
  }
  return library;
}

export type ArgumentValidator = (args: unknown) => ToolArgumentIssue[];

export class SchemaValidators {
  private readonly instances = new Map<string, AjvInstance>();

  /**
   * Compiles `schema` once; throws (with ajv's reason) when the schema is invalid. The returned
   * function lists every problem with the arguments, or nothing when they are valid.
   */
  compile(schema: Record<string, unknown>): { validate: ArgumentValidator; release: () => void } {
    const ajv = this.instanceFor(schema.$schema);
    const compiled: ValidateFunction = ajv.compile(schema);
    return {
      validate: (args) => (compiled(args) ? [] : (compiled.errors ?? []).map(toIssue)),
      // ajv caches compiled schemas by object; forget it so unregistered tools do not pile up.
      release: () => {
        ajv.removeSchema(schema);
      },
    };
  }

  private instanceFor(dialect: unknown): AjvInstance {
    const key = dialectKey(dialect);
    let ajv = this.instances.get(key);
    if (ajv === undefined) {
      ajv = createAjv(key, true);
      this.instances.set(key, ajv);
    }
    return ajv;
  }
}

/** Trusted schemas' validators, by dialect and schema text: built-in schemas are few and fixed. */
const trustedValidators = new Map<string, ValidateFunction>();
const trustedInstances = new Map<string, AjvInstance>();

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
        let ajv = trustedInstances.get(key);
        if (ajv === undefined) {
          ajv = createAjv(key, false);
          trustedInstances.set(key, ajv);
        }
        compiled = ajv.compile(schema);
        trustedValidators.set(text, compiled);
      }
    }
    return compiled(args) ? [] : (compiled.errors ?? []).map(toIssue);
  };
}

function createAjv(key: string, validateSchema: boolean): AjvInstance {
  const { Ajv, Ajv2019, Ajv2020, addFormats } = ajvLibrary();
  const options = { strict: false, allErrors: true, logger: false as const, validateSchema };
  const ajv =
    key === "2020-12" ? new Ajv2020(options) : key === "2019-09" ? new Ajv2019(options) : new Ajv(options);
  addFormats(ajv);
  return ajv;
}

function dialectKey(dialect: unknown): string {
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
