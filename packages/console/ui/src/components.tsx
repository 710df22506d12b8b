/** Small pieces every page uses: loading an admin call, errors, paging, buttons that show work. */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { describe } from "./api.js";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload()); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  // `deps` are the caller's: it names what `load` reads.
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!current) return;
        setError(failure);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {describe(error)}
    </p>
  );
}

/** A button that runs `action`, shows "…" while it runs and reports its failure beside it. */
export function ActionButton(props: {
  label: string;
  action: () => Promise<unknown>;
  kind?: "primary" | "danger";
  disabled?: boolean;
  testId?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await props.action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button
        type="button"
        class={props.kind ?? ""}
        disabled={busy || props.disabled}
        onClick={run}
        data-testid={props.testId}
      >
        {busy ? `${props.label}…` : props.label}
      </button>
      {error === undefined ? null : <span class="error inline">{describe(error)}</span>}
    </span>
  );
}

export const PAGE_SIZE = 20;

/**
 * Slices `items` into pages of `size` with previous / next controls. `fromEnd`: a list that grows
 * at its end (events as they happen) opens on its last page and stays there as items arrive, until
 * the operator pages back.
 */
export function usePage<T>(
  items: readonly T[],
  options: { size?: number; fromEnd?: boolean } = {},
): { rows: readonly T[]; pager: ComponentChildren } {
  const size = options.size ?? PAGE_SIZE;
  const [page, setPage] = useState<number | undefined>(undefined);
  const pages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.min(page ?? (options.fromEnd ? pages - 1 : 0), pages - 1);
  const rows = items.slice(current * size, (current + 1) * size);
  // Back on the last page of a growing list: follow its end again.
  const go = (next: number) => setPage(options.fromEnd && next === pages - 1 ? undefined : next);
  const pager =
    pages <= 1 ? null : (
      <Pager
        label={`page ${current + 1} of ${pages} (${items.length})`}
        onPrevious={current > 0 ? () => go(current - 1) : undefined}
        onNext={current < pages - 1 ? () => go(current + 1) : undefined}
      />
    );
  return { rows, pager };
}

export function Pager(props: { label: string; onPrevious?: () => void; onNext?: () => void }) {
  return (
    <nav class="pager">
      <button type="button" disabled={props.onPrevious === undefined} onClick={props.onPrevious}>
        ‹ previous
      </button>
      <span>{props.label}</span>
      <button type="button" disabled={props.onNext === undefined} onClick={props.onNext}>
        next ›
      </button>
    </nav>
  );
}

export function time(ms: number | undefined): string {
  return ms === undefined ? "" : new Date(ms).toLocaleString();
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}
