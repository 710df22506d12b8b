/**
 * Vector memory backends: where embeddings are stored and searched (Pinecone, Qdrant, …). Today
 * they come from plugins (`[plugin.extends].memory_backends`, plugin contract §5.w); long-term
 * memory keeps its SQLite store and only the vector index is pluggable.
 *
 * Backends fail with the typed memory errors of @nexo/wire —
 * MemoryCollectionNotFoundError (-33301, `collection`), MemoryDimensionMismatchError (-33302,
 * `expected`, `got`), MemoryRateLimitedError (-33303, `retryAfterSecs`), MemoryWriteFailedError
 * (-33304) — or with a transport error (timeout, the plugin stopped).
 */
import type { plugin } from "@nexo/wire/schemas";

/** `{id, content, embedding, metadata?}`: a pre-computed dense vector and what it stands for. */
export type VectorRecord = plugin.VectorRecord;
/** `{embedding, limit, filter?}`; `filter` is the backend's own syntax, passed through untouched. */
export type VectorQuery = plugin.VectorQuery;
/** `{id, content, score, metadata?}`; `score` is on the backend's native scale. */
export type VectorMatch = plugin.VectorMatch;

export interface VectorBackend {
  readonly name: string;
  /** Who provides it, for logs and status: `plugin:pinecone`. */
  readonly owner: string;
  /** Inserts or replaces records; resolves with how many were written. */
  upsert(collection: string, records: readonly VectorRecord[]): Promise<number>;
  search(collection: string, query: VectorQuery): Promise<VectorMatch[]>;
  /** Resolves with how many records were removed. */
  delete(collection: string, ids: readonly string[]): Promise<number>;
}

export class DuplicateVectorBackendError extends Error {
  readonly code = "duplicate_vector_backend" as const;
  readonly backend: string;
  constructor(name: string, existingOwner: string, newOwner: string) {
    super(
      `vector backend "${name}" is already provided by ${existingOwner}; ${newOwner} cannot register it too`,
    );
    this.name = "DuplicateVectorBackendError";
    this.backend = name;
  }
}

export class UnknownVectorBackendError extends Error {
  readonly code = "unknown_vector_backend" as const;
  readonly backend: string;
  constructor(name: string, known: readonly string[]) {
    super(`no vector backend named "${name}"; registered: ${known.length ? known.join(", ") : "(none)"}`);
    this.name = "UnknownVectorBackendError";
    this.backend = name;
  }
}

export class VectorBackendRegistry {
  private readonly backends = new Map<string, VectorBackend>();

  /** Adds a backend under its name. Returns a function that removes it again, and only it. */
  register(backend: VectorBackend, options: { replace?: boolean } = {}): () => void {
    const existing = this.backends.get(backend.name);
    if (existing !== undefined && existing !== backend && !options.replace) {
      throw new DuplicateVectorBackendError(backend.name, existing.owner, backend.owner);
    }
    this.backends.set(backend.name, backend);
    return () => {
      if (this.backends.get(backend.name) === backend) this.backends.delete(backend.name);
    };
  }

  get(name: string): VectorBackend | undefined {
    return this.backends.get(name);
  }

  require(name: string): VectorBackend {
    const backend = this.backends.get(name);
    if (backend === undefined) throw new UnknownVectorBackendError(name, this.names());
    return backend;
  }

  has(name: string): boolean {
    return this.backends.has(name);
  }

  names(): string[] {
    return [...this.backends.keys()].sort();
  }
}
